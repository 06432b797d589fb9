-- name: OrderInsert :exec
INSERT INTO catalog_item_instances (id, project, catalog_item_id, service_type, display_name, labels, user_values,
                                    parent_id, state, lifecycle, version, generation, attributes, instance_id,
                                    provider_name, status, status_message, create_time, update_time, terminal,
                                    identity, pending_instance_id, validation, last_error, request_key,
                                    user_value_sets)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
        $25, $26);

-- name: OrderIDByRequestKey :one
-- request_key <> '' lets the planner use the partial index (WHERE
-- request_key <> ''): it cannot prove a bound parameter is not '', so
-- without it every create with an Idempotency-Key scanned the table
-- (issue 46).
SELECT id FROM catalog_item_instances WHERE request_key = $1 AND request_key <> '';

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
WHERE id = $1 AND project = $2;

-- name: OrderShow :one
-- One order as the API shows it (GET): OrderList's columns, read as a list
-- reads them (attribute sets passed through undecoded; no validation, no
-- value sets), and the instance joined once for its outputs and sync.
SELECT o.id, o.project, o.catalog_item_id, o.service_type, o.display_name, o.labels, o.user_values, o.parent_id,
       o.state, o.lifecycle, o.version, o.generation, o.attributes, o.instance_id, o.provider_name, o.status,
       o.status_message, o.restart_count, o.create_time, o.update_time, o.deleted_at, o.terminal, o.identity,
       o.pending_instance_id, 'null'::jsonb AS validation, o.last_error, o.expire_time, NULL::jsonb AS user_value_sets,
       i.outputs, i.synced,
       (SELECT r.instance_id FROM resources r WHERE r.catalog_item_instance_id = o.id
          AND r.rehydration_status = 'RUNNING' AND r.copy_start_time IS NOT NULL) AS copying_to,
       COALESCE(jsonb_typeof(o.attributes->'active') = 'object', false) AS has_active
FROM catalog_item_instances o
LEFT JOIN service_type_instances i ON i.id = o.instance_id
WHERE o.id = $1 AND o.project = $2;

-- name: OrderLock :one
-- Locks an order for a transfer: the engine's writers serialise on it.
SELECT id, project, catalog_item_id, service_type, display_name, labels, user_values, parent_id, state, lifecycle,
       version, generation, attributes, instance_id, provider_name, status, status_message, restart_count,
       create_time, update_time, deleted_at, terminal, identity, pending_instance_id, validation, last_error, expire_time,
       user_value_sets, NULL::jsonb AS outputs, NULL::jsonb AS synced, NULL::text AS copying_to -- a transfer has no use for them
FROM catalog_item_instances
WHERE id = $1
FOR UPDATE;

-- name: OrderList :many
-- A project's orders, oldest first. Every project's, newest first, and of
-- live orders only are derived from it (orderListQueries in order_lists.go,
-- which rewrites the terms it names: keep them as they are written).
-- params: project, service_type, service_type, state, state, catalog_item_id, catalog_item_id, parent_id, parent_id, labels, show_deleted, after_time, after_id, limit
-- plan: per call (store.PlanPerCall): its filters are ($n = '' OR col = $m)
SELECT o.id, o.project, o.catalog_item_id, o.service_type, o.display_name, o.labels, o.user_values, o.parent_id,
       o.state, o.lifecycle, o.version, o.generation, o.attributes, o.instance_id, o.provider_name, o.status,
       o.status_message, o.restart_count, o.create_time, o.update_time, o.deleted_at, o.terminal, o.identity,
       o.pending_instance_id,
       'null'::jsonb AS validation, -- a list has no use for the validation, often the largest column
       o.last_error, o.expire_time, NULL::jsonb AS user_value_sets, -- the list shows user_values, not the sets
       i.outputs, i.synced, -- the current instance's, joined
       -- the new instance of a running rehydration that is copying the data
       (SELECT r.instance_id FROM resources r WHERE r.catalog_item_instance_id = o.id
          AND r.rehydration_status = 'RUNNING' AND r.copy_start_time IS NOT NULL) AS copying_to,
       -- whether the active set is there, for the Ready condition (the
       -- attribute sets are passed through undecoded)
       COALESCE(jsonb_typeof(o.attributes->'active') = 'object', false) AS has_active
FROM catalog_item_instances o
LEFT JOIN service_type_instances i ON i.id = o.instance_id
WHERE o.project = $1 -- on the (project, create_time, id) index
  AND ($2::text = '' OR o.service_type = $3)
  AND ($4::text = '' OR o.state = $5)
  AND ($6::text = '' OR o.catalog_item_id = $7)
  AND ($8::text = '' OR o.parent_id = $9)
  AND o.labels @> $10::jsonb
  -- tombstones only when asked for; orders being deleted are listed
  AND ($11::boolean OR o.expire_time IS NULL)
  AND (o.create_time, o.id) > ($12, $13)
ORDER BY o.create_time, o.id
LIMIT $14;

-- name: OrderSave :exec
-- params: display_name, labels, user_values, state, version, generation, attributes, instance_id, provider_name, status, status_message, update_time, deleted_at, terminal, identity, pending_instance_id, validation, last_error, expire_time, user_value_sets, restart_count, id, read_version
-- Writes an order after a transfer or an edit; version is the one read.
UPDATE catalog_item_instances
SET display_name = $1, labels = $2, user_values = $3, state = $4, version = $5, generation = $6, attributes = $7,
    instance_id = $8, provider_name = $9, status = $10, status_message = $11, update_time = $12, deleted_at = $13,
    terminal = $14, identity = $15, pending_instance_id = $16, validation = $17, last_error = $18,
    expire_time = $19, user_value_sets = $20, restart_count = $21
WHERE id = $22 AND version = $23;

-- name: OrderSaveState :exec
-- params: state, version, generation, instance_id, provider_name, status, status_message, update_time, deleted_at, terminal, pending_instance_id, last_error, expire_time, restart_count, id, read_version
-- Writes an order whose attribute sets, validation, labels and values are
-- as read: a status report, a transfer without operation.
UPDATE catalog_item_instances
SET state = $1, version = $2, generation = $3, instance_id = $4, provider_name = $5, status = $6, status_message = $7,
    update_time = $8, deleted_at = $9, terminal = $10, pending_instance_id = $11, last_error = $12, expire_time = $13,
    restart_count = $14
WHERE id = $15 AND version = $16;

-- name: OrderEventInsert :exec
INSERT INTO order_events (order_id, version, time, trigger, source, target, operation, error)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8);

-- name: OrderEventInsertReport :exec
-- params: order_id, version, time, trigger, source, target, reported_by, changes, order_id, version
-- A reported change, after the events of its version.
INSERT INTO order_events (order_id, version, seq, time, trigger, source, target, operation, error, reported_by, changes)
SELECT $1, $2, COALESCE(MAX(seq), 0) + 1, $3, $4, $5, $6, '', '', $7, $8
FROM order_events WHERE order_id = $9 AND version = $10;

-- name: OrderEventInsertNote :exec
-- params: order_id, version, time, trigger, source, target, operation_id, instance_id, provider_name, message, changes, order_id, version
-- What happened to the order's instances without a transfer (a rehydration
-- started, the order moved onto its new instance, a cleanup done), after
-- the events of its version.
INSERT INTO order_events (order_id, version, seq, time, trigger, source, target, operation, error, operation_id,
                          instance_id, provider_name, message, changes)
SELECT $1, $2, COALESCE(MAX(seq), 0) + 1, $3, $4, $5, $6, '', '', $7, $8, $9, $10, $11
FROM order_events WHERE order_id = $12 AND version = $13;

-- name: OrderEventList :many
-- Events page by (version, seq): the cursor's id is "version.seq".
SELECT version, seq, time, trigger, source, target, operation, error, reported_by, changes, operation_id,
       instance_id, provider_name, message
FROM order_events
WHERE order_id = $1 AND (version > $2 OR (version = $3 AND seq > $4))
ORDER BY version, seq
LIMIT $5;

-- name: OrderCountChildrenLeft :one
-- The children of an order not yet removed, soft-deleted ones included:
-- the parent's deletion waits for them (DESIGN §4).
SELECT count(*) FROM catalog_item_instances WHERE parent_id = $1 AND NOT terminal;

-- name: OrderListWaitingDeletion :many
-- Deleting orders whose resource is gone: they wait at the deletion gate.
-- In the order of catalog_item_instances_deleting, a partial index of the
-- orders being deleted: ORDER BY id alone walked the primary key past
-- every live order.
SELECT id FROM catalog_item_instances
WHERE deleted_at IS NOT NULL AND NOT terminal AND (instance_id = '' OR status = 'DELETED')
ORDER BY deleted_at, id
LIMIT $1;

-- name: OrderListLiveChildren :many
-- The children of an order not being deleted yet: its DELETE cascades to
-- them, or is refused for those whose type restricts it.
SELECT id, service_type FROM catalog_item_instances WHERE parent_id = $1 AND deleted_at IS NULL ORDER BY id;

-- name: OrderListChildrenToForce :many
-- The children of an order not yet removed: a force delete removes them.
SELECT id FROM catalog_item_instances WHERE parent_id = $1 AND NOT terminal ORDER BY id;

-- name: OrderListExpired :many
-- Tombstones past their expire_time, for the purge.
SELECT id FROM catalog_item_instances WHERE expire_time IS NOT NULL AND expire_time < $1
ORDER BY expire_time
LIMIT $2;

-- name: OrderEventsPurge :exec
DELETE FROM order_events WHERE order_id = $1;

-- name: OrderPurge :exec
-- A tombstone's row (its adapter reports go with it).
DELETE FROM catalog_item_instances WHERE id = $1 AND expire_time IS NOT NULL;

-- name: OrderListDeleting :many
-- Orders being deleted and not yet removed, oldest deletion first: the
-- stuck-deletion metrics.
SELECT id, deleted_at, generation FROM catalog_item_instances
WHERE deleted_at IS NOT NULL AND NOT terminal
ORDER BY deleted_at, id
LIMIT $1;

-- name: OrderLockParent :one
-- Serialises the removals of a parent's children (PostgreSQL), so the
-- last one to go knows it is the last.
SELECT id FROM catalog_item_instances WHERE id = $1 FOR UPDATE;

-- name: OrderCountSiblingsLeft :one
-- The children of a parent not yet removed, but for one being removed now.
SELECT count(*) FROM catalog_item_instances WHERE parent_id = $1 AND NOT terminal AND id <> $2;

-- name: OrderAwaitsRemoval :one
-- Whether an order is being deleted and not removed yet: only such an
-- order's reconcile checks its deletion gate.
SELECT COUNT(*) FROM catalog_item_instances WHERE id = $1 AND deleted_at IS NOT NULL AND NOT terminal;

-- name: OrderLockStatus :one
-- Locks an order for a status change's reconcile and reads what it needs,
-- without its attribute sets, labels, values and validation: most reports
-- fire no transfer, and decoding those was half of such a reconcile's cost.
SELECT id, lifecycle, state, version, instance_id, pending_instance_id, provider_name, status, status_message,
       restart_count, deleted_at, terminal
FROM catalog_item_instances
WHERE id = $1
FOR UPDATE;

-- name: OrderSaveStatus :exec
-- params: status, status_message, restart_count, update_time, id, read_version
-- Writes a status change that fired nothing: the order's version does not
-- move (a report changes no intent).
UPDATE catalog_item_instances
SET status = $1, status_message = $2, restart_count = $3, update_time = $4
WHERE id = $5 AND version = $6;
