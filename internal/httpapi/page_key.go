package httpapi

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

// pageKeySize is the size of the key that signs page tokens: HMAC-SHA256's
// block size would be more than enough, its output size is.
const pageKeySize = 32

// LoadPageKey returns the page-token key of db's install (Config.PageKey),
// made at random by the first server to start on db. Servers starting at
// once each try to insert theirs; one wins and every one reads it.
func LoadPageKey(ctx context.Context, db *store.DB) ([]byte, error) {
	q := newQueries(db.Engine())
	if _, err := q.ServerSecretsInsert(ctx, db, newPageKey(), time.Now().UTC()); err != nil {
		return nil, fmt.Errorf("make the page token key: %w", err)
	}
	key, err := q.ServerSecretsGet(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("read the page token key: %w", err)
	}
	if len(key) < pageKeySize {
		return nil, fmt.Errorf("read the page token key: %d bytes, want %d", len(key), pageKeySize)
	}
	return key, nil
}

func newPageKey() []byte {
	key := make([]byte, pageKeySize)
	_, _ = rand.Read(key) // never fails (crypto/rand.Read's doc)
	return key
}
