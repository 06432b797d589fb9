-- +goose Up
-- A rehydration that carries its data (issue 24): copy_start_time is when
-- the new resource's provider was asked to copy the old one's data (the old
-- instance takes no writes from then until the copy ends); NULL for a
-- rehydration that copies nothing. The wait for the copy is timed from it,
-- and the order shows the copy while its rehydration runs.
ALTER TABLE resources ADD COLUMN copy_start_time TEXT;

-- +goose Down
ALTER TABLE resources DROP COLUMN copy_start_time;
