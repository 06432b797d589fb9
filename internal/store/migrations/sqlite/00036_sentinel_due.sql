-- +goose Up

-- The sentinel's marks become a queue ordered by when each order is next due
-- for a decision (issue 27), so that a cycle reads the due work, not the
-- inventory: the sentinel sets due_time when it decides (a debounce or max
-- age later), these triggers set it to the change's time when the order or
-- one of its adapter reports changes, and a terminal order's mark is parked
-- (NULL). New orders, which have no mark yet, are read on (create_time, id).
-- Existing marks are due at once: one decision each after the upgrade.
ALTER TABLE sentinel_marks ADD COLUMN due_time TEXT;
UPDATE sentinel_marks SET due_time = COALESCE(published_time, evaluated_time);
CREATE INDEX sentinel_marks_due ON sentinel_marks (due_time, order_id);

-- +goose StatementBegin
CREATE TRIGGER sentinel_due_on_order_change AFTER UPDATE OF update_time, generation ON catalog_item_instances
WHEN NEW.update_time IS NOT OLD.update_time OR NEW.generation IS NOT OLD.generation
BEGIN
    UPDATE sentinel_marks SET due_time = NEW.update_time
    WHERE order_id = NEW.id AND (due_time IS NULL OR due_time > NEW.update_time);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER sentinel_due_on_report AFTER INSERT ON order_adapter_statuses
BEGIN
    UPDATE sentinel_marks SET due_time = NEW.update_time
    WHERE order_id = NEW.order_id AND (due_time IS NULL OR due_time > NEW.update_time);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER sentinel_due_on_report_change AFTER UPDATE OF update_time ON order_adapter_statuses
WHEN NEW.update_time IS NOT OLD.update_time
BEGIN
    UPDATE sentinel_marks SET due_time = NEW.update_time
    WHERE order_id = NEW.order_id AND (due_time IS NULL OR due_time > NEW.update_time);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER sentinel_due_on_report_change;
DROP TRIGGER sentinel_due_on_report;
DROP TRIGGER sentinel_due_on_order_change;
DROP INDEX sentinel_marks_due;
ALTER TABLE sentinel_marks DROP COLUMN due_time;
