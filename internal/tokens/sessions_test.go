package tokens_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/internal/tokens"
)

// clock is a test's settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// sessionsEnv is a tokens service on a store of its own, on a clock the
// test moves.
func sessionsEnv(t *testing.T, engine store.Engine, static map[string]auth.Principal) (*tokens.Service, *store.DB, *clock) {
	t.Helper()
	db := storetest.Open(t, engine)
	clk := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	return tokens.New(tokens.Config{DB: db, Now: clk.Now, Static: static}), db, clk
}

func mustToken(t *testing.T, svc *tokens.Service, p tokens.CreateParams) (tokens.Token, string) {
	t.Helper()
	tok, secret, err := svc.Create(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return tok, secret
}

// Issue 45, finding 10: a console session's id is 256 random bits that the
// store keeps only as its SHA-256, next to the token that signed in (not
// its secret); the session resumes as that token's principal, until it is
// ended (signed out) or its token is revoked, either of which ends it at
// once; a token that does not authenticate starts none.
func TestSessions_StartResumeEnd(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		svc, db, _ := sessionsEnv(t, engine, nil)
		tok, secret := mustToken(t, svc, tokens.CreateParams{Name: "alice", Role: auth.RoleUser, Project: "team-a"})

		if _, _, err := svc.StartSession(ctx, secret+"x"); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Fatalf("a session for a wrong token: %v, want ErrUnauthenticated", err)
		}
		id, sess, err := svc.StartSession(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if raw, err := base64.RawURLEncoding.DecodeString(id); err != nil || len(raw) < 32 {
			t.Errorf("session id %q: want at least 256 bits, base64url (%v)", id, err)
		}
		if sess.TokenID != tok.ID {
			t.Errorf("session's token = %q, want %q", sess.TokenID, tok.ID)
		}
		other, _, err := svc.StartSession(ctx, secret)
		if err != nil || other == id {
			t.Fatalf("a second sign-in got id %q (%v), want a new one", other, err)
		}

		var key, tokenID, tokenSum string
		if err := db.QueryRow(ctx, "SELECT id_sha256, token_id, token_sha256 FROM console_sessions ORDER BY create_time, id_sha256 LIMIT 1").
			Scan(&key, &tokenID, &tokenSum); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(id))
		sumOther := sha256.Sum256([]byte(other))
		if key != hex.EncodeToString(sum[:]) && key != hex.EncodeToString(sumOther[:]) {
			t.Errorf("the row's key %q is not the SHA-256 of a session id", key)
		}
		for _, v := range []string{key, tokenID, tokenSum} {
			if strings.Contains(v, id) || strings.Contains(v, other) || strings.Contains(v, secret) {
				t.Errorf("the row holds a session id or the token's secret: %q", v)
			}
		}

		p, err := svc.ResumeSession(ctx, id)
		if err != nil || p.Key() != tok.Principal().Key() || p.Project != "team-a" || p.Role != auth.RoleUser {
			t.Fatalf("resume: %+v, %v; want alice's principal with her token", p, err)
		}
		for _, bad := range []string{"", "short", strings.Repeat("A", 43), id + "A"} {
			if _, err := svc.ResumeSession(ctx, bad); !errors.Is(err, tokens.ErrNoSession) {
				t.Errorf("resume %q: %v, want ErrNoSession", bad, err)
			}
		}

		if err := svc.EndSession(ctx, id); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ResumeSession(ctx, id); !errors.Is(err, tokens.ErrNoSession) {
			t.Errorf("resume after the end: %v, want ErrNoSession", err)
		}
		if err := svc.EndSession(ctx, id); err != nil {
			t.Errorf("ending an ended session: %v", err)
		}
		if _, err := svc.ResumeSession(ctx, other); err != nil {
			t.Errorf("ending one session ended another: %v", err)
		}

		// The token authenticates (and is cached) just before its
		// revocation; the session ends anyway, at once.
		if _, err := svc.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Revoke(ctx, "", tok.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ResumeSession(ctx, other); !errors.Is(err, tokens.ErrNoSession) {
			t.Errorf("resume after the token's revocation: %v, want ErrNoSession", err)
		}
		var n int64
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM console_sessions").Scan(&n); err != nil || n != 0 {
			t.Errorf("%d session rows left (%v), want the dead one deleted when found", n, err)
		}
		if _, _, err := svc.StartSession(ctx, secret); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("a session for a revoked token: %v, want ErrUnauthenticated", err)
		}
	})
}

// Issue 45, finding 10: a session ends after 8 hours unused, its use
// sliding that on, and 24 hours after sign-in however much it is used,
// never later than its token's expiry; the sweep deletes the sessions that
// are over and no other.
func TestSessions_ExpireIdleAbsoluteAndWithTheirToken(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		svc, _, clk := sessionsEnv(t, engine, nil)
		_, secret := mustToken(t, svc, tokens.CreateParams{Name: "alice", Role: auth.RoleUser, Project: "team-a"})
		_, shortLived := mustToken(t, svc, tokens.CreateParams{Name: "bob", Role: auth.RoleUser, Project: "team-a", TTL: time.Hour})
		start := func(token string) string {
			t.Helper()
			id, _, err := svc.StartSession(ctx, token)
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		live := func(id string) bool {
			t.Helper()
			_, err := svc.ResumeSession(ctx, id)
			if err != nil && !errors.Is(err, tokens.ErrNoSession) {
				t.Fatal(err)
			}
			return err == nil
		}

		used, idle := start(secret), start(secret)
		_, sess, err := svc.StartSession(ctx, shortLived)
		if err != nil || !sess.ExpireTime.Equal(clk.Now().Add(time.Hour)) || !sess.IdleExpireTime.Equal(sess.ExpireTime) {
			t.Errorf("a session of a token expiring in an hour: %+v (%v), want it to end with the token", sess, err)
		}
		bobs := start(shortLived)

		clk.Add(7 * time.Hour)
		if !live(used) {
			t.Fatal("a session used within its idle time ended")
		}
		if live(bobs) {
			t.Error("a session outlived its token's expiry")
		}
		clk.Add(time.Hour + time.Minute) // 8h01 after sign-in, 1h01 after its last use
		if live(idle) {
			t.Error("a session unused for 8 hours is still live")
		}
		if !live(used) {
			t.Fatal("a session used an hour ago ended: its idle expiry does not slide")
		}
		for range 4 { // used every 4 hours, up to 24h01 after sign-in
			clk.Add(4 * time.Hour)
			live(used)
		}
		if live(used) {
			t.Error("a session used all along outlived its absolute expiry of 24 hours")
		}

		// used, idle and bobs were deleted when found dead; the sweep takes
		// the one that is over and was never used (bob's first), and leaves
		// a live one.
		fresh := start(secret)
		if swept, err := svc.SweepSessions(ctx); err != nil || swept != 1 {
			t.Errorf("the sweep deleted %d (%v), want 1", swept, err)
		}
		if !live(fresh) {
			t.Error("the sweep ended a live session")
		}
		clk.Add(tokens.SessionIdle)
		if swept, err := svc.SweepSessions(ctx); err != nil || swept != 1 {
			t.Errorf("the sweep after the fresh session's idle expiry deleted %d (%v), want 1", swept, err)
		}
	})
}

// Issue 45, finding 10: a session of a static token (--api-token) resumes
// while the server has that token, and ends when it no longer does: after
// a restart with another --api-token, or none.
func TestSessions_OfAStaticTokenEndWithIt(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		admin := auth.Principal{Type: "service_account", ID: "admin", Role: auth.RoleAdmin, Token: "static-api-token"}
		svc, db, clk := sessionsEnv(t, engine, map[string]auth.Principal{"first-secret": admin})
		id, _, err := svc.StartSession(ctx, "first-secret")
		if err != nil {
			t.Fatal(err)
		}
		if p, err := svc.ResumeSession(ctx, id); err != nil || p.Key() != admin.Key() {
			t.Fatalf("resume: %+v, %v; want the static admin", p, err)
		}
		same := tokens.New(tokens.Config{DB: db, Now: clk.Now, Static: map[string]auth.Principal{"first-secret": admin}})
		if _, err := same.ResumeSession(ctx, id); err != nil {
			t.Errorf("after a restart with the same --api-token: %v", err)
		}
		rotated := tokens.New(tokens.Config{DB: db, Now: clk.Now, Static: map[string]auth.Principal{"second-secret": admin}})
		if _, err := rotated.ResumeSession(ctx, id); !errors.Is(err, tokens.ErrNoSession) {
			t.Errorf("after a restart with another --api-token: %v, want ErrNoSession", err)
		}
	})
}
