-- +goose Up
-- One running rotation of an order's credentials at a time (issue 24): a
-- second would be asked of the provider under its own operation id, and
-- the retry of the first after it would rotate once more.
CREATE UNIQUE INDEX operations_one_rotation ON operations (project, target) WHERE kind = 'rotate_credentials' AND NOT done;

-- +goose Down
DROP INDEX operations_one_rotation;
