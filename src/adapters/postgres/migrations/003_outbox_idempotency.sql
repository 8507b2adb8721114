-- Outbox and idempotency keys (rules EVT-7-delivery, IDEM-*). Numbered 003, not 002: another change adds 002 concurrently (the list index).

-- The transactional outbox: one row per order-placed event, written in the order's transaction.
-- seq orders the relay's claims; sent_at is set once the broker acknowledged the event;
-- notified_at once a notifier announced it (the ledger that keeps `order placed` to one line).
CREATE TABLE order_outbox (
  id          uuid PRIMARY KEY,
  seq         bigint GENERATED ALWAYS AS IDENTITY,
  payload     jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  sent_at     timestamptz,
  notified_at timestamptz
);

-- The relay's claim (WHERE sent_at IS NULL ORDER BY seq) and the backlog count read only pending rows.
CREATE INDEX order_outbox_pending_idx ON order_outbox (seq) WHERE sent_at IS NULL;
-- Housekeeping deletes sent rows by age.
CREATE INDEX order_outbox_sent_idx ON order_outbox (sent_at) WHERE sent_at IS NOT NULL;

-- Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): scoped per user, one row per key; the
-- primary key makes concurrent first uses of a key serialise across replicas.
CREATE TABLE idempotency_keys (
  user_id     text NOT NULL,
  key         text NOT NULL,
  fingerprint text NOT NULL,
  order_id    uuid NOT NULL,
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (user_id, key)
);

CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);
