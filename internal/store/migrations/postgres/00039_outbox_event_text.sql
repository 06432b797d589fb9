-- +goose Up

-- The outbox keeps each event as the text it was written (issue 27): the
-- relay publishes it unchanged, and nothing reads inside it. As jsonb, every
-- insert parsed it, about 10 µs an event and a sixth of the database's work
-- in a sentinel cycle over 100,000 due orders. An older replica's insert
-- (`$3::jsonb`) still works: PostgreSQL casts jsonb to text on assignment.
ALTER TABLE event_outbox ALTER COLUMN event TYPE text USING event::text;

-- +goose Down
ALTER TABLE event_outbox ALTER COLUMN event TYPE jsonb USING event::jsonb;
