package store_test

import (
	"io/fs"
	"os"
	"testing"
)

// Both engines must carry the same migration versions (STYLE §9).
func TestMigrations_SameVersionsOnBothEngines(t *testing.T) {
	t.Parallel()
	names := func(dir string) []string {
		entries, err := fs.ReadDir(os.DirFS("migrations"), dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	lite, pg := names("sqlite"), names("postgres")
	if len(lite) == 0 || len(lite) != len(pg) {
		t.Fatalf("migrations differ: sqlite %v, postgres %v", lite, pg)
	}
	for i := range lite {
		if lite[i] != pg[i] {
			t.Errorf("migration %d: sqlite %s, postgres %s", i, lite[i], pg[i])
		}
	}
}
