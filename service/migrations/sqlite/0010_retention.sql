-- Pruning finds expired rows by these: idempotency records by when their request arrived, usage
-- rows by day (see `Store::prune_idempotency` and `Store::prune_usage`).
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
CREATE INDEX usage_daily_day ON usage_daily (day);
