-- name: OrderInsert :exec
INSERT INTO catalog_item_instances (id, project, catalog_item_id, service_type, display_name, labels, user_values,
                                    parent_id, state, lifecycle, version, generation, attributes, instance_id,
                                    provider_name, status, status_message, create_time, update_time, terminal,
                                    identity, pending_instance_id, validation, last_error, request_key,
                                    user_value_sets)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: OrderIDByRequestKey :one
-- request_key <> '' lets the planner use the partial index (WHERE
-- request_key <> ''): it cannot prove a bound parameter is not '', so
-- without it every create with an Idempotency-Key scanned the table
-- (issue 46).
SELECT id FROM catalog_item_instances WHERE request_key = ? AND request_key <> '';

-- name: OrderGet :one
SELECT id, project, catalog_item_id, service_type, display_name, labels, user_values, parent_id, state, lifecycle,
       version, generation, attributes, instance_id, provider_name, status, status_message, restart_count,
       create_time, update_time, deleted_at, terminal, identity, pending_instance_id, validation, last_error, expire_time,
       user_value_sets,
       -- the current instance's outputs: stored once, by the SPRM, and read
       -- with the order rather than by a second query
       (SELECT i.outputs FROM service_type_instances i WHERE i.id = catalog_item_instances.instance_id) AS outputs,
       (SELECT i.synced FROM service_type_instances i WHERE i.id = catalog_item_instances.instance_id) AS synced,
       -- the new instance of a running rehydration that is copying the data
       (SELECT r.instance_id FROM resources r WHERE r.catalog_item_instance_id = catalog_item_instances.id
          AND r.rehydration_status = 'RUNNING' AND r.copy_start_time IS NOT NULL) AS copying_to
FROM catalog_item_instances
WHERE id = ? AND project = ?;

-- name: OrderShow :one
-- One order as the API shows it (GET): OrderList's columns, read as a list
-- reads them (attribute sets passed through undecoded; no validation, no
-- value sets), and the instance joined once for its outputs and sync.
SELECT o.id, o.project, o.catalog_item_id, o.service_type, o.display_name, o.labels, o.user_values, o.parent_id,
       o.state, o.lifecycle, o.version, o.generation, o.attributes, o.instance_id, o.provider_name, o.status,
       o.status_message, o.restart_count, o.create_time, o.update_time, o.deleted_at, o.terminal, o.identity,
       o.pending_instance_id, 'null' AS validation, o.last_error, o.expire_time, NULL AS user_value_sets,
       i.outputs, i.synced,
       (SELECT r.instance_id FROM resources r WHERE r.catalog_item_instance_id = o.id
          AND r.rehydration_status = 'RUNNING' AND r.copy_start_time IS NOT NULL) AS copying_to,
       COALESCE(json_type(o.attributes, '$.active') = 'object', 0) AS has_active
FROM catalog_item_instances o
LEFT JOIN service_type_instances i ON i.id = o.instance_id
WHERE o.id = ? AND o.project = ?;

-- name: OrderLock :one
-- Reads an order inside a write transaction before a transfer; SQLite's
-- immediate transactions already hold the write lock.
SELECT id, project, catalog_item_id, service_type, display_name, labels, user_values, parent_id, state, lifecycle,
       version, generation, attributes, instance_id, provider_name, status, status_message, restart_count,
       create_time, update_time, deleted_at, terminal, identity, pending_instance_id, validation, last_error, expire_time,
       user_value_sets, NULL AS outputs, NULL AS synced, NULL AS copying_to -- a transfer has no use for them
FROM catalog_item_instances
WHERE id = ?;

-- name: OrderList :many
-- A project's orders, oldest first. Every project's, newest first, and of
-- live orders only are derived from it (orderListQueries in order_lists.go,
-- which rewrites the terms it names: keep them as they are written).
-- params: project, service_type, service_type, state, state, catalog_item_id, catalog_item_id, parent_id, parent_id, labels, show_deleted, after_time, after_id, limit
SELECT o.id, o.project, o.catalog_item_id, o.service_type, o.display_name, o.labels, o.user_values, o.parent_id,
       o.state, o.lifecycle, o.version, o.generation, o.attributes, o.instance_id, o.provider_name, o.status,
       o.status_message, o.restart_count, o.create_time, o.update_time, o.deleted_at, o.terminal, o.identity,
       o.pending_instance_id,
       'null' AS validation, -- a list has no use for the validation, often the largest column
       o.last_error, o.expire_time, NULL AS user_value_sets, -- the list shows user_values, not the sets
       i.outputs, i.synced, -- the current instance's, joined
       -- the new instance of a running rehydration that is copying the data
       (SELECT r.instance_id FROM resources r WHERE r.catalog_item_instance_id = o.id
          AND r.rehydration_status = 'RUNNING' AND r.copy_start_time IS NOT NULL) AS copying_to,
       -- whether the active set is there, for the Ready condition (the
       -- attribute sets are passed through undecoded)
       COALESCE(json_type(o.attributes, '$.active') = 'object', 0) AS has_active
FROM catalog_item_instances o
LEFT JOIN service_type_instances i ON i.id = o.instance_id
WHERE o.project = ?1 -- on the (project, create_time, id) index
  AND (? = '' OR o.service_type = ?)
  AND (? = '' OR o.state = ?)
  AND (? = '' OR o.catalog_item_id = ?)
  AND (? = '' OR o.parent_id = ?)
  -- ?10 is the label filter: without one, json_each is not opened for
  -- every row (a fifth of the query's time on a page of 100).
  AND (?10 = '{}' OR NOT EXISTS (SELECT 1 FROM json_each(?10) AS want
                  WHERE json_extract(o.labels, '$.' || json_quote(want.key)) IS NOT want.value))
  -- tombstones only when asked for; orders being deleted are listed
  AND (? OR o.expire_time IS NULL)
  AND (o.create_time, o.id) > (?, ?)
ORDER BY o.create_time, o.id
LIMIT CAST(? AS INTEGER);

-- name: OrderSave :exec
-- params: display_name, labels, user_values, state, version, generation, attributes, instance_id, provider_name, status, status_message, update_time, deleted_at, terminal, identity, pending_instance_id, validation, last_error, expire_time, user_value_sets, restart_count, id, read_version
-- Writes an order after a transfer or an edit; version is the one read.
UPDATE catalog_item_instances
SET display_name = ?, labels = ?, user_values = ?, state = ?, version = ?, generation = ?, attributes = ?,
    instance_id = ?, provider_name = ?, status = ?, status_message = ?, update_time = ?, deleted_at = ?,
    terminal = ?, identity = ?, pending_instance_id = ?, validation = ?, last_error = ?,
    expire_time = ?, user_value_sets = ?, restart_count = ?
WHERE id = ? AND version = ?;

-- name: OrderSaveState :exec
-- params: state, version, generation, instance_id, provider_name, status, status_message, update_time, deleted_at, terminal, pending_instance_id, last_error, expire_time, restart_count, id, read_version
-- Writes an order whose attribute sets, validation, labels and values are
-- as read: a status report, a transfer without operation.
UPDATE catalog_item_instances
SET state = ?, version = ?, generation = ?, instance_id = ?, provider_name = ?, status = ?, status_message = ?,
    update_time = ?, deleted_at = ?, terminal = ?, pending_instance_id = ?, last_error = ?, expire_time = ?,
    restart_count = ?
WHERE id = ? AND version = ?;

-- name: OrderEventInsert :exec
INSERT INTO order_events (order_id, version, time, trigger, source, target, operation, error)
VALUES (?, ?, ?, ?, ?, ?, ?, ?);

-- name: OrderEventInsertReport :exec
-- params: order_id, version, time, trigger, source, target, reported_by, changes, order_id, version
-- A reported change, after the events of its version.
INSERT INTO order_events (order_id, version, seq, time, trigger, source, target, operation, error, reported_by, changes)
SELECT ?, ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, '', '', ?, ?
FROM order_events WHERE order_id = ? AND version = ?;

-- name: OrderEventInsertNote :exec
-- params: order_id, version, time, trigger, source, target, operation_id, instance_id, provider_name, message, changes, order_id, version
-- What happened to the order's instances without a transfer (a rehydration
-- started, the order moved onto its new instance, a cleanup done), after
-- the events of its version.
INSERT INTO order_events (order_id, version, seq, time, trigger, source, target, operation, error, operation_id,
                          instance_id, provider_name, message, changes)
SELECT ?, ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, '', '', ?, ?, ?, ?, ?
FROM order_events WHERE order_id = ? AND version = ?;

-- name: OrderEventList :many
-- Events page by (version, seq): the cursor's id is "version.seq".
SELECT version, seq, time, trigger, source, target, operation, error, reported_by, changes, operation_id,
       instance_id, provider_name, message
FROM order_events
WHERE order_id = ? AND (version > ? OR (version = ? AND seq > ?))
ORDER BY version, seq
LIMIT CAST(? AS INTEGER);

-- name: OrderCountChildrenLeft :one
-- The children of an order not yet removed, soft-deleted ones included:
-- the parent's deletion waits for them (DESIGN §4).
SELECT count(*) FROM catalog_item_instances WHERE parent_id = ? AND terminal = 0;

-- name: OrderListWaitingDeletion :many
-- Deleting orders whose resource is gone: they wait at the deletion gate.
-- In the order of catalog_item_instances_deleting, a partial index of the
-- orders being deleted: ORDER BY id alone walked the primary key past
-- every live order.
SELECT id FROM catalog_item_instances
WHERE deleted_at IS NOT NULL AND terminal = 0 AND (instance_id = '' OR status = 'DELETED')
ORDER BY deleted_at, id
LIMIT CAST(? AS INTEGER);

-- name: OrderListLiveChildren :many
-- The children of an order not being deleted yet: its DELETE cascades to
-- them, or is refused for those whose type restricts it.
SELECT id, service_type FROM catalog_item_instances WHERE parent_id = ? AND deleted_at IS NULL ORDER BY id;

-- name: OrderListChildrenToForce :many
-- The children of an order not yet removed: a force delete removes them.
SELECT id FROM catalog_item_instances WHERE parent_id = ? AND terminal = 0 ORDER BY id;

-- name: OrderListExpired :many
-- Tombstones past their expire_time, for the purge.
SELECT id FROM catalog_item_instances WHERE expire_time IS NOT NULL AND expire_time < ?
ORDER BY expire_time
LIMIT CAST(? AS INTEGER);

-- name: OrderEventsPurge :exec
DELETE FROM order_events WHERE order_id = ?;

-- name: OrderPurge :exec
-- A tombstone's row (its adapter reports go with it).
DELETE FROM catalog_item_instances WHERE id = ? AND expire_time IS NOT NULL;

-- name: OrderListDeleting :many
-- Orders being deleted and not yet removed, oldest deletion first: the
-- stuck-deletion metrics.
SELECT id, deleted_at, generation FROM catalog_item_instances
WHERE deleted_at IS NOT NULL AND terminal = 0
ORDER BY deleted_at, id
LIMIT CAST(? AS INTEGER);

-- name: OrderLockParent :one
-- Serialises the removals of a parent's children (PostgreSQL), so the
-- last one to go knows it is the last.
SELECT id FROM catalog_item_instances WHERE id = ?;

-- name: OrderCountSiblingsLeft :one
-- The children of a parent not yet removed, but for one being removed now.
SELECT count(*) FROM catalog_item_instances WHERE parent_id = ? AND terminal = 0 AND id <> ?;

-- name: OrderAwaitsRemoval :one
-- Whether an order is being deleted and not removed yet: only such an
-- order's reconcile checks its deletion gate.
SELECT COUNT(*) FROM catalog_item_instances WHERE id = ? AND deleted_at IS NOT NULL AND NOT terminal;

-- name: OrderLockStatus :one
-- Reads what a status change's reconcile needs of an order, without its
-- attribute sets, labels, values and validation: most reports fire no
-- transfer, and decoding those was half of such a reconcile's cost.
SELECT id, lifecycle, state, version, instance_id, pending_instance_id, provider_name, status, status_message,
       restart_count, deleted_at, terminal
FROM catalog_item_instances
WHERE id = ?;

-- name: OrderSaveStatus :exec
-- params: status, status_message, restart_count, update_time, id, read_version
-- Writes a status change that fired nothing: the order's version does not
-- move (a report changes no intent).
UPDATE catalog_item_instances
SET status = ?, status_message = ?, restart_count = ?, update_time = ?
WHERE id = ? AND version = ?;
