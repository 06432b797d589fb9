package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// seeded starts a quiet server holding n operations and returns their ids.
func seeded(b *testing.B, engine store.Engine, n int) (*apitest.Server, []string) {
	b.Helper()
	s := apitest.Start(b, engine, func(c *server.Config) { c.Logger = slog.New(slog.DiscardHandler) })
	ids := make([]string, 0, n)
	ctx := context.Background()
	if err := s.DB().InTx(ctx, func(tx *store.Tx) error {
		for i := range n {
			op, err := s.Operations().StartTx(ctx, tx, operations.StartParams{
				Project: "default", Kind: "rehydrate", Target: fmt.Sprintf("catalog-item-instances/%d", i),
			})
			if err != nil {
				return err
			}
			ids = append(ids, op.ID)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	return s, ids
}

func benchEngines(b *testing.B, fn func(b *testing.B, engine store.Engine)) {
	for _, e := range storetest.Engines() {
		b.Run(string(e), func(b *testing.B) { fn(b, e) })
	}
}

// serve runs one request through the whole handler chain in-process
// (routing, auth, validation, store), without the network.
func serve(b *testing.B, h http.Handler, path string) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	if w.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
}

func BenchmarkHealth(b *testing.B) {
	benchEngines(b, func(b *testing.B, engine store.Engine) {
		s, _ := seeded(b, engine, 0)
		h := s.Handler()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				serve(b, h, "/api/v1/health")
			}
		})
	})
}

func BenchmarkOperationGet_10kRows(b *testing.B) {
	benchEngines(b, func(b *testing.B, engine store.Engine) {
		s, ids := seeded(b, engine, 10_000)
		h := s.Handler()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				serve(b, h, "/api/v1/operations/"+ids[i%len(ids)])
				i += 7919
			}
		})
	})
}

func BenchmarkOperationList_50of10kRows(b *testing.B) {
	benchEngines(b, func(b *testing.B, engine store.Engine) {
		s, _ := seeded(b, engine, 10_000)
		h := s.Handler()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				serve(b, h, "/api/v1/operations?max_page_size=50")
			}
		})
	})
}
