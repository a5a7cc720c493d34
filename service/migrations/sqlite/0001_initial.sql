-- Accounts and API keys. Keys are stored as a SHA-256 fingerprint only; the secret is shown once.
CREATE TABLE users (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    verified    BIGINT NOT NULL,
    restricted  BIGINT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id),
    name          TEXT NOT NULL,
    prefix        TEXT NOT NULL,
    fingerprint   TEXT NOT NULL UNIQUE,
    scopes        TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    revoked_at    BIGINT,
    last_used_at  BIGINT,
    request_count BIGINT NOT NULL DEFAULT 0,
    error_count   BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX api_keys_user ON api_keys (user_id);

-- Usage records: counts and timings per key, UTC date, operation and status. No keys, bodies or content.
CREATE TABLE usage_daily (
    key_id     TEXT NOT NULL,
    day        TEXT NOT NULL,
    operation  TEXT NOT NULL,
    status     BIGINT NOT NULL,
    requests   BIGINT NOT NULL,
    total_ms   BIGINT NOT NULL,
    max_ms     BIGINT NOT NULL,
    PRIMARY KEY (key_id, day, operation, status)
);

-- Rate-limit counters, shared by every instance using this database.
CREATE TABLE rate_counters (
    bucket      TEXT PRIMARY KEY,
    count       BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX rate_counters_expiry ON rate_counters (expires_at);

-- Idempotency records, isolated per API key.
CREATE TABLE idempotency_keys (
    key_id        TEXT NOT NULL,
    idem_key      TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    state         TEXT NOT NULL,
    status        BIGINT,
    body          BLOB,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (key_id, idem_key)
);

-- Marking sessions; an import is a session whose origin is 'import'.
CREATE TABLE marking_sessions (
    id                 TEXT PRIMARY KEY,
    user_id            TEXT NOT NULL REFERENCES users (id),
    title              TEXT NOT NULL,
    origin             TEXT NOT NULL,
    status             TEXT NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    completed_at       BIGINT,
    submission_sha256  TEXT,
    source_json        TEXT,
    coverage_kind      TEXT,
    outcome_json       TEXT
);
CREATE INDEX marking_sessions_user ON marking_sessions (user_id, created_at);

CREATE TABLE assets (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES marking_sessions (id),
    user_id       TEXT NOT NULL REFERENCES users (id),
    kind          TEXT NOT NULL,
    name          TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    size_bytes    BIGINT NOT NULL,
    page_count    BIGINT NOT NULL,
    sha256        TEXT NOT NULL,
    created_at    BIGINT NOT NULL
);
CREATE INDEX assets_session ON assets (session_id, created_at);

CREATE TABLE asset_blobs (
    asset_id  TEXT PRIMARY KEY REFERENCES assets (id),
    bytes     BLOB NOT NULL
);

CREATE TABLE marking_questions (
    id             TEXT PRIMARY KEY,
    session_id     TEXT NOT NULL REFERENCES marking_sessions (id),
    user_id        TEXT NOT NULL REFERENCES users (id),
    position       BIGINT NOT NULL,
    label          TEXT NOT NULL,
    status         TEXT NOT NULL,
    revision       BIGINT NOT NULL,
    awarded        BIGINT NOT NULL,
    possible       BIGINT NOT NULL,
    max_marks      BIGINT NOT NULL,
    question_json  TEXT NOT NULL,
    result_json    TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    UNIQUE (session_id, position)
);
