-- +goose Up

-- Policies (API.md, Policies): Rego modules run as the Global → Tenant →
-- User chain. label_selector is a JSON object; enabled is 0 or 1.
CREATE TABLE policies (
    id             TEXT PRIMARY KEY,
    display_name   TEXT NOT NULL,
    policy_type    TEXT NOT NULL,
    priority       INTEGER NOT NULL,
    label_selector TEXT NOT NULL,
    rego_code      TEXT NOT NULL,
    enabled        INTEGER NOT NULL,
    version        INTEGER NOT NULL,
    create_time    TEXT NOT NULL,
    update_time    TEXT NOT NULL
);
-- Same priority or same name within one level → 409 (API.md).
CREATE UNIQUE INDEX policies_type_priority ON policies (policy_type, priority);
CREATE UNIQUE INDEX policies_type_display_name ON policies (policy_type, display_name);
CREATE INDEX policies_create_time ON policies (create_time, id);
CREATE INDEX policies_type_create_time ON policies (policy_type, create_time, id);
CREATE INDEX policies_enabled_create_time ON policies (enabled, create_time, id);

-- One row, bumped in the transaction of every policy change, so each
-- replica sees that its compiled set is stale and reloads it.
CREATE TABLE policy_revision (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    revision BIGINT NOT NULL
);
INSERT INTO policy_revision (id, revision) VALUES (1, 0);

-- +goose Down
DROP TABLE policy_revision;
DROP TABLE policies;
