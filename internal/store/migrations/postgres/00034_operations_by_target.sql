-- +goose Up
-- An order's operations are listed by their target (issue 25: the console's
-- order page shows the operations on the order it shows).
CREATE INDEX operations_project_target ON operations (project, target, create_time, id);

-- +goose Down
DROP INDEX operations_project_target;
