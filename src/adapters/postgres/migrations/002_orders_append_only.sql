-- orders is append-only (spec 3.1: an order never changes after it is created). The list query walks
-- its offset with an index-only scan of orders_user_created_idx (postgres-order-repository.ts), which
-- the planner prefers over a bitmap scan plus sort only with current row estimates per user, and which
-- skips the heap only on pages the visibility map marks all-visible. An insert-only table gets both
-- from autovacuum only after 20% (vacuum) / 10% (analyze) growth by default; 1% keeps a large table's
-- statistics and visibility map current, each run then touching only the newly appended pages.
ALTER TABLE orders SET (
  autovacuum_vacuum_insert_scale_factor = 0.01,
  autovacuum_analyze_scale_factor = 0.01
);
