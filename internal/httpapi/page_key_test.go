package httpapi_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Replicas starting at once on one database each try to make the page
// token key; every one reads the same, and so does a later start.
func TestLoadPageKey_OneKeyForEveryStart(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		keys := make([][]byte, 4)
		var wg sync.WaitGroup
		for i := range keys {
			wg.Go(func() {
				var err error
				if keys[i], err = httpapi.LoadPageKey(t.Context(), db); err != nil {
					t.Errorf("start %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		later, err := httpapi.LoadPageKey(t.Context(), db)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			if len(k) != 32 || !bytes.Equal(k, later) {
				t.Errorf("start %d read key %x, a later start %x: want one 32-byte key", i, k, later)
			}
		}
	})
}
