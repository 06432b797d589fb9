-- +goose Up

-- The web console's sign-ins (issue 45, finding 10), owned by the tokens
-- package. The browser's cookie holds a random session id (256 bits); the
-- row keeps only its SHA-256 (id_sha256), so a copy of the database opens no
-- session. A session stands for the token that signed in (token_id, and
-- token_sha256, that token's hash, which also finds a static --api-token),
-- read again on every console request: a revoked or expired token ends it at
-- once. idle_expire_time slides with use and never passes expire_time (24 h
-- after sign-in, never past the token's own expiry), so a session is over
-- once idle_expire_time is past: the one column the sweep reads, by its index.
CREATE TABLE console_sessions (
    id_sha256        TEXT PRIMARY KEY,
    token_id         TEXT NOT NULL,
    token_sha256     TEXT NOT NULL,
    create_time      TIMESTAMPTZ NOT NULL,
    idle_expire_time TIMESTAMPTZ NOT NULL,
    expire_time      TIMESTAMPTZ NOT NULL
);
CREATE INDEX console_sessions_idle_expire_time ON console_sessions (idle_expire_time);

-- +goose Down
DROP TABLE console_sessions;
