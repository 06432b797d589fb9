-- +goose Up

-- How many times the provider restarted an instance's workload, as its
-- last status report said (issue 22): NULL while no report carried a count.
ALTER TABLE service_type_instances ADD COLUMN restart_count INTEGER;

-- +goose Down
ALTER TABLE service_type_instances DROP COLUMN restart_count;
