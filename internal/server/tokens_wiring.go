package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/console"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/processprovider"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tokens"
)

// buildTokens sets up authentication. Outside --dev a server needs a way
// in: a static admin token (--api-token) or an admin token in the store.
// An in-process provider outside --dev (a no-op one) gets a service-account
// token of its own, bound to its provider, so it can report on its
// instances and nothing else.
func (s *Server) buildTokens(ctx context.Context) error {
	static := map[string]auth.Principal{}
	if s.cfg.APIToken != "" {
		static[s.cfg.APIToken] = auth.Principal{Type: "service_account", ID: "admin", Role: auth.RoleAdmin,
			Token: "static-api-token"}
	}
	if s.cfg.ProcessProvider && !s.cfg.Dev {
		var raw [32]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return fmt.Errorf("server: the in-process provider's token: %w", err)
		}
		s.providerToken = "stw_process_" + hex.EncodeToString(raw[:])
		static[s.providerToken] = auth.Principal{Type: "service_account", ID: processprovider.Name,
			Role: auth.RoleServiceAccount, Provider: processprovider.Name, Token: "static-process-provider",
			ServiceTypes: []string{"*"}, Projects: []string{auth.AllProjects}}
	}
	s.tokens = tokens.New(tokens.Config{DB: s.db, Dev: s.cfg.Dev, Static: static})
	if s.cfg.Dev || s.cfg.APIToken != "" {
		return nil
	}
	ok, err := s.tokens.HasAdmin(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("server: no administrator token, so no one could use the API. Create the first one with " +
			"`steward token create --name NAME --role admin` (with this server's --data-dir or --database-url), " +
			"or pass a static one with --api-token, or run with --dev (no authentication)")
	}
	return nil
}

// CreateTokenConfig says which store to open and which token to make.
type CreateTokenConfig struct {
	DataDir, DatabaseURL string
	Token                tokens.CreateParams
	// Role is Token.Role, spelled as the command line does.
	Role string
	// Actor names who ran the command, for the audit record (the OS user).
	Actor string
}

// CreateToken makes a token directly in the store, without a running
// server: how the first admin token comes to be (`steward token create`).
// It returns the secret, shown only this once.
func CreateToken(ctx context.Context, cfg CreateTokenConfig) (string, error) {
	db, err := store.Open(ctx, store.Config{DatabaseURL: cfg.DatabaseURL, DataDir: cmp.Or(cfg.DataDir, "steward-data"),
		Migrators: Migrators(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return "", err
	}
	defer db.Close()
	cfg.Token.Role = auth.Role(cfg.Role)
	t, secret, err := tokens.New(tokens.Config{DB: db}).Create(ctx, cfg.Token)
	if err != nil {
		return "", err
	}
	// No server records this one: the audit log says who made it here, as
	// POST /api/v1/tokens's record would.
	rec := audit.Record{Actor: audit.Actor{Type: "user", ID: cmp.Or(cfg.Actor, "local")}, Action: "token.create",
		Target: "token:" + t.ID, Project: t.Project, Outcome: audit.OutcomeSuccess,
		Details: map[string]any{"name": t.Name, "role": string(t.Role), "via": "steward token create (database direct)"}}
	if err := audit.New(db).Write(ctx, rec); err != nil {
		return "", fmt.Errorf("token %s created, but %w", t.ID, err)
	}
	return secret, nil
}

// consoleSessions are the console's sign-ins, kept by the tokens package
// (console_sessions): a session resumes as its token's principal, which
// the console's in-process API calls act as through httpapi.ActAs, a
// context value no remote request can carry.
type consoleSessions struct{ tokens *tokens.Service }

func (c consoleSessions) Start(ctx context.Context, token string) (string, time.Time, error) {
	id, sess, err := c.tokens.StartSession(ctx, token)
	if errors.Is(err, auth.ErrUnauthenticated) {
		return "", time.Time{}, console.ErrSignedOut
	}
	return id, sess.ExpireTime, err
}

func (c consoleSessions) Resume(ctx context.Context, id string) (context.Context, error) {
	p, err := c.tokens.ResumeSession(ctx, id)
	if errors.Is(err, auth.ErrUnauthenticated) {
		return nil, console.ErrSignedOut
	}
	if err != nil {
		return nil, err
	}
	return httpapi.ActAs(ctx, p), nil
}

func (c consoleSessions) End(ctx context.Context, id string) error {
	return c.tokens.EndSession(ctx, id)
}
