package pgprovider

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

// The verifier is the one PostgreSQL computes itself for the same
// password, salt and iteration count.
func TestScramVerifier_MatchesPostgres(t *testing.T) {
	t.Parallel()
	p := openProvider(t)
	role, password := unique("scram"), "pencil-"+unique("pw")
	if _, err := p.admin.Exec(t.Context(), "SET password_encryption = 'scram-sha-256'"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.admin.Exec(t.Context(), "CREATE ROLE "+ident(role)+" PASSWORD "+literal(password)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = p.admin.Exec(t.Context(), "DROP ROLE IF EXISTS "+ident(role)) })
	theirs := query[string](t, p, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", role)
	// SCRAM-SHA-256$<iterations>:<salt>$<stored key>:<server key>
	head, _, _ := strings.Cut(strings.TrimPrefix(theirs, "SCRAM-SHA-256$"), "$")
	iter, salt64, _ := strings.Cut(head, ":")
	iterations, err := strconv.Atoi(iter)
	must(t, err)
	salt, err := base64.StdEncoding.DecodeString(salt64)
	must(t, err)
	ours, err := scramVerifierWith(password, salt, iterations)
	must(t, err)
	if ours != theirs {
		t.Errorf("verifier\n ours   %s\n theirs %s", ours, theirs)
	}
	if ours, _ := scramVerifierWith(password+"x", salt, iterations); ours == theirs {
		t.Errorf("another password gives the same verifier")
	}
}

// A password is the same for the same key, instance and rotation, and
// different when any of them changes.
func TestDerivePassword(t *testing.T) {
	t.Parallel()
	k1, k2 := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))
	base := derivePassword(k1, "i-1", 0)
	if derivePassword(k1, "i-1", 0) != base {
		t.Fatal("not deterministic")
	}
	for _, other := range []string{derivePassword(k2, "i-1", 0), derivePassword(k1, "i-2", 0), derivePassword(k1, "i-1", 1)} {
		if other == base {
			t.Errorf("a different key, instance or rotation gives the same password")
		}
	}
	if len(base) < 40 {
		t.Errorf("password %d characters, want 256 bits' worth", len(base))
	}
}
