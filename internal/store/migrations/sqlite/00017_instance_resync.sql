-- +goose Up

-- Resync (issue 22): Steward reads an instance back from its provider when
-- no status has come for a while, so one lost report cannot leave it
-- PROVISIONING for ever. status_time is when Steward last learned the
-- instance's status from its provider (an answer to a call, a report, or a
-- resync). resync_time is when it is next read back; NULL while the
-- provider has not acknowledged it (a create's intent, an outcome Steward
-- does not know) and once it is deleted. resync_attempts counts the reads
-- in a row that left it unsettled (the backoff), and resync_claimed_by is
-- the process reading it now, so a dead process's claims are released at once.
ALTER TABLE service_type_instances ADD COLUMN status_time TEXT;
ALTER TABLE service_type_instances ADD COLUMN resync_time TEXT;
ALTER TABLE service_type_instances ADD COLUMN resync_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE service_type_instances ADD COLUMN resync_claimed_by TEXT NOT NULL DEFAULT '';
UPDATE service_type_instances SET status_time = update_time, resync_time = update_time
WHERE deleted_at IS NULL AND status IN ('PROVISIONING', 'RUNNING', 'FAILED', 'DELETING');
CREATE INDEX service_type_instances_resync_time ON service_type_instances (resync_time) WHERE resync_time IS NOT NULL;
CREATE INDEX service_type_instances_resync_claimed_by ON service_type_instances (resync_claimed_by)
    WHERE resync_claimed_by <> '';

-- Providers (issue 22, item 4): a registration that moves a provider to
-- another endpoint keeps the one it left and when, so two replicas that
-- both register one name do not take it over from each other unseen.
ALTER TABLE providers ADD COLUMN previous_endpoint TEXT NOT NULL DEFAULT '';
ALTER TABLE providers ADD COLUMN endpoint_change_time TEXT;

-- +goose Down
ALTER TABLE providers DROP COLUMN endpoint_change_time;
ALTER TABLE providers DROP COLUMN previous_endpoint;
DROP INDEX service_type_instances_resync_claimed_by;
DROP INDEX service_type_instances_resync_time;
ALTER TABLE service_type_instances DROP COLUMN resync_claimed_by;
ALTER TABLE service_type_instances DROP COLUMN resync_attempts;
ALTER TABLE service_type_instances DROP COLUMN resync_time;
ALTER TABLE service_type_instances DROP COLUMN status_time;
