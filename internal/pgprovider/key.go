package pgprovider

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LoadOrCreateKey reads the provider's secret key from path (64 hex
// characters), creating it (mode 0600) when it does not exist. Keep it:
// the owners' passwords are derived from it, and a provider on another
// key cannot hand them out.
func LoadOrCreateKey(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("pgprovider: secret key: %w", err)
		}
		// O_EXCL: two providers started at once keep the first one's key.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return LoadOrCreateKey(path)
		}
		if err != nil {
			return nil, fmt.Errorf("pgprovider: secret key: %w", err)
		}
		_, werr := f.WriteString(hex.EncodeToString(key) + "\n")
		if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
			return nil, fmt.Errorf("pgprovider: write secret key %s: %w", path, err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgprovider: secret key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("pgprovider: secret key %s: want at least 64 hex characters", path)
	}
	return key, nil
}

// exportKey signs the provider's export grants: derived from its secret
// key, so a grant outlives a restart of the provider; nil (a random key)
// without one.
func exportKey(secret []byte) []byte {
	if len(secret) == 0 {
		return nil
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("steward-export-grants"))
	return m.Sum(nil)
}
