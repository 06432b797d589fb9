package pgprovider

import (
	"crypto/rand"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The outputs name the server as --advertise says its users reach it (a
// port left out is the admin URL's), or else as the admin URL does; an
// address that is not host[:port] is refused at start.
func TestOutputs_NameTheAdvertisedAddress(t *testing.T) {
	t.Parallel()
	admin, err := pgx.ParseConfig(testServer(t))
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	for _, tc := range []struct {
		advertise string
		host      string
		port      int
	}{
		{"", admin.Host, int(admin.Port)},
		{"db-1.example.internal:6432", "db-1.example.internal", 6432},
		{"db-1.example.internal", "db-1.example.internal", int(admin.Port)},
		{"[2001:db8::7]:5433", "2001:db8::7", 5433},
	} {
		p, err := Open(t.Context(), Config{AdminURL: testServer(t), SecretKey: key, Advertise: tc.advertise})
		if err != nil {
			t.Fatalf("advertise %q: %v", tc.advertise, err)
		}
		t.Cleanup(p.Close) // after order's cleanup, which drops the database through p
		req := order(t, p, nil)
		got, err := p.Create(t.Context(), req)
		if err != nil {
			t.Fatalf("advertise %q: create: %v", tc.advertise, err)
		}
		if got.Outputs["host"] != tc.host || got.Outputs["port"] != tc.port || got.Outputs["database"] != req.Spec["database"] {
			t.Errorf("advertise %q: outputs %v, want host %s, port %d, database %v", tc.advertise, got.Outputs,
				tc.host, tc.port, req.Spec["database"])
		}
	}
	for _, bad := range []string{"db:0", "db:99999", "db:port", "user@db", ":5432", "db/x"} {
		if p, err := Open(t.Context(), Config{AdminURL: testServer(t), SecretKey: key, Advertise: bad}); err == nil {
			p.Close()
			t.Errorf("advertise %q: opened, want refused", bad)
		}
	}
}
