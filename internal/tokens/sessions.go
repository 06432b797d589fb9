package tokens

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/store"
)

// Console sessions (issue 45, finding 10). A browser that signs in to the
// web console with a token gets a session instead of keeping the token:
// its cookie holds a random session id, and the console_sessions row, kept
// here because a session is a credential that this package turns into a
// principal like a token, holds only the id's SHA-256 and which token
// signed in. Each console request resumes the session by reading that
// token again, uncached: a revoked or expired token ends its sessions at
// once, on every replica. Signing out deletes the row.

// Session lifetimes: a session ends after SessionIdle without use, and
// SessionMaxAge after it began (never later than its token's expiry).
const (
	SessionIdle   = 8 * time.Hour
	SessionMaxAge = 24 * time.Hour
	// sessionTouchEvery is the resolution of the idle expiry: a session
	// used more often is written at most this often.
	sessionTouchEvery = time.Minute
	// sessionIDBytes is a session id's randomness (256 bits).
	sessionIDBytes = 32
)

// ErrNoSession is returned for a session id that names no live session:
// never made, signed out, expired, or its token revoked or expired. It is
// an auth.ErrUnauthenticated.
var ErrNoSession = fmt.Errorf("%w: no such console session", auth.ErrUnauthenticated)

// Session is a console sign-in, as the store keeps it.
type Session struct {
	// TokenID is the token that signed in ("" on a --dev server; a static
	// token's kind for --api-token).
	TokenID        string
	CreateTime     time.Time
	IdleExpireTime time.Time
	// ExpireTime is when the session ends whatever its use.
	ExpireTime time.Time
}

// StartSession authenticates token, as the API would, and starts a console
// session as its principal. It returns the session's id, the secret the
// browser's cookie holds (the store keeps only its SHA-256), and the
// session. A token that does not authenticate is auth.ErrUnauthenticated.
func (s *Service) StartSession(ctx context.Context, token string) (string, Session, error) {
	now := store.Now(s.cfg.Now)
	sum := sha256.Sum256([]byte(token))
	sess := Session{CreateTime: now, ExpireTime: now.Add(SessionMaxAge)}
	switch p, static := s.static[sum]; {
	case s.cfg.Dev:
	case token == "":
		return "", Session{}, auth.ErrUnauthenticated
	case static:
		sess.TokenID = p.Token
	default:
		t, err := s.verify(ctx, token, sum, now)
		if err != nil {
			return "", Session{}, err
		}
		sess.TokenID = t.ID
		if t.ExpireTime != nil && t.ExpireTime.Before(sess.ExpireTime) {
			sess.ExpireTime = *t.ExpireTime
		}
	}
	sess.IdleExpireTime = earlier(now.Add(SessionIdle), sess.ExpireTime)
	var raw [sessionIDBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", Session{}, fmt.Errorf("start a console session: %w", err)
	}
	id := base64.RawURLEncoding.EncodeToString(raw[:])
	if _, err := s.q.SessionInsert(ctx, s.cfg.DB, SessionInsertParams{IDSHA256: sessionKey(id), TokenID: sess.TokenID,
		TokenSHA256: hex.EncodeToString(sum[:]), CreateTime: sess.CreateTime, IdleExpireTime: sess.IdleExpireTime,
		ExpireTime: sess.ExpireTime}); err != nil {
		return "", Session{}, fmt.Errorf("start a console session: %w", err)
	}
	return id, sess, nil
}

// ResumeSession returns the principal of the live session id, read again
// from its token (never from the cache: a revocation ends the session at
// once), and slides its idle expiry. A session that is not live is
// ErrNoSession; one found dead (expired, its token revoked) is deleted.
func (s *Service) ResumeSession(ctx context.Context, id string) (auth.Principal, error) {
	if base64.RawURLEncoding.DecodedLen(len(id)) != sessionIDBytes {
		return auth.Principal{}, ErrNoSession
	}
	key := sessionKey(id)
	row, err := s.q.SessionGet(ctx, s.cfg.DB, key)
	if errors.Is(err, store.ErrNotFound) {
		return auth.Principal{}, ErrNoSession
	}
	if err != nil {
		return auth.Principal{}, fmt.Errorf("read a console session: %w", err)
	}
	now := store.Now(s.cfg.Now)
	p, err := s.sessionPrincipal(ctx, row, now)
	if errors.Is(err, auth.ErrUnauthenticated) {
		if _, err := s.q.SessionDelete(ctx, s.cfg.DB, key); err != nil {
			return auth.Principal{}, fmt.Errorf("end a dead console session: %w", err)
		}
		return auth.Principal{}, ErrNoSession
	}
	if err != nil {
		return auth.Principal{}, err
	}
	if idle := earlier(now.Add(SessionIdle), row.ExpireTime); idle.Sub(row.IdleExpireTime) >= sessionTouchEvery {
		if _, err := s.q.SessionTouch(ctx, s.cfg.DB, idle, key); err != nil {
			return auth.Principal{}, fmt.Errorf("renew a console session: %w", err)
		}
	}
	return p, nil
}

// sessionPrincipal is who the session's token authenticates now, or
// auth.ErrUnauthenticated when the session or its token is over.
func (s *Service) sessionPrincipal(ctx context.Context, row SessionGetRow, now time.Time) (auth.Principal, error) {
	if !now.Before(row.IdleExpireTime) || !now.Before(row.ExpireTime) {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	if s.cfg.Dev {
		return auth.Dev, nil
	}
	var sum [sha256.Size]byte
	if n, err := hex.Decode(sum[:], []byte(row.TokenSHA256)); err != nil || n != sha256.Size {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	// A static token is found by its hash: a session of an --api-token
	// the server no longer has (or has changed) ends with it.
	if p, ok := s.static[sum]; ok && p.Token == row.TokenID {
		return p, nil
	}
	if row.TokenID == "" {
		return auth.Principal{}, auth.ErrUnauthenticated // a --dev session on a server that authenticates
	}
	t, err := s.get(ctx, row.TokenID)
	if errors.Is(err, ErrNotFound) {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	if err != nil {
		return auth.Principal{}, err
	}
	if subtle.ConstantTimeCompare([]byte(row.TokenSHA256), []byte(t.secretSHA256)) != 1 ||
		t.RevokeTime != nil || t.ExpireTime != nil && !now.Before(*t.ExpireTime) {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	return t.Principal(), nil
}

// EndSession deletes the session id (signing out): the id opens nothing
// after it. Ending a session that is gone is no error.
func (s *Service) EndSession(ctx context.Context, id string) error {
	if _, err := s.q.SessionDelete(ctx, s.cfg.DB, sessionKey(id)); err != nil {
		return fmt.Errorf("end a console session: %w", err)
	}
	return nil
}

// SweepSessions deletes the sessions that are over (past their idle
// expiry, which never passes the absolute one), by an index: a periodic
// job. A session its token's revocation ended is deleted by its next use
// or by the sweep once its expiry passes.
func (s *Service) SweepSessions(ctx context.Context) (int64, error) {
	n, err := s.q.SessionSweep(ctx, s.cfg.DB, store.Now(s.cfg.Now))
	if err != nil {
		return 0, fmt.Errorf("sweep console sessions: %w", err)
	}
	return n, nil
}

// sessionKey is how the store names session id: its SHA-256, in hex.
func sessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// earlier is the earlier of a and b.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
