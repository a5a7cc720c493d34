-- Automated marking (PostgreSQL): sessions made for it (origin 'automated'), optionally bound to a frozen paper
-- revision; the page index of every uploaded page; the job queue shared by every worker on this
-- database; and each account's daily automated-marking allowance.

ALTER TABLE marking_sessions ADD COLUMN paper_id TEXT;
ALTER TABLE marking_sessions ADD COLUMN paper_revision BIGINT;
-- The paper revision's structured scheme (its questions' criteria), JSON, kept with the session.
ALTER TABLE marking_sessions ADD COLUMN scheme_json TEXT;
-- NULL before start; then queued, running, completed or failed.
ALTER TABLE marking_sessions ADD COLUMN indexing_state TEXT;
ALTER TABLE marking_sessions ADD COLUMN pages_total BIGINT NOT NULL DEFAULT 0;
ALTER TABLE marking_sessions ADD COLUMN pages_done BIGINT NOT NULL DEFAULT 0;
ALTER TABLE marking_sessions ADD COLUMN started_at BIGINT;
ALTER TABLE marking_sessions ADD COLUMN indexed_at BIGINT;

-- The answer-space layout recorded when a revision's PDFs were typeset (JSON); NULL for exports
-- prepared before layouts were recorded (the layout is typeset again when first needed).
ALTER TABLE paper_exports ADD COLUMN layout_json TEXT;

-- What indexing found on one page of one asset.
CREATE TABLE asset_pages (
    asset_id      TEXT NOT NULL REFERENCES assets (id),
    page          BIGINT NOT NULL,
    session_id    TEXT NOT NULL REFERENCES marking_sessions (id),
    -- ok, or failed (with error)
    state         TEXT NOT NULL,
    error         TEXT,
    -- degrees the content is turned clockwise on the displayed page: 0, 90, 180, 270
    orientation   BIGINT NOT NULL,
    text_source   TEXT NOT NULL,
    width_px      BIGINT NOT NULL,
    height_px     BIGINT NOT NULL,
    -- work, clean_paper, scheme_as_work or scheme
    role          TEXT NOT NULL,
    role_reason   TEXT NOT NULL,
    -- JSON: the decoded page code, the question labels found (with how), the words with boxes,
    -- and the comparison with the clean question paper page
    code_json     TEXT,
    labels_json   TEXT NOT NULL,
    words_json    TEXT NOT NULL,
    compare_json  TEXT,
    indexed_at    BIGINT NOT NULL,
    PRIMARY KEY (asset_id, page)
);
CREATE INDEX asset_pages_session ON asset_pages (session_id);

-- The job queue. A worker claims a due job (queued, or running with an expired lease) by setting
-- a fresh lease token; it keeps the lease alive with heartbeats and saves its result only in the
-- same transaction that finishes the job under that token, so a job has at most one saved result.
CREATE TABLE marking_jobs (
    id             TEXT PRIMARY KEY,
    kind           TEXT NOT NULL,
    session_id     TEXT NOT NULL REFERENCES marking_sessions (id),
    user_id        TEXT NOT NULL REFERENCES users (id),
    payload        TEXT NOT NULL,
    -- queued, running, done, failed or cancelled
    state          TEXT NOT NULL,
    attempts       BIGINT NOT NULL DEFAULT 0,
    max_attempts   BIGINT NOT NULL,
    run_after      BIGINT NOT NULL,
    lease_owner    TEXT,
    lease_token    TEXT,
    lease_expires  BIGINT,
    last_error     TEXT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    finished_at    BIGINT
);
CREATE INDEX marking_jobs_due ON marking_jobs (state, run_after);
CREATE INDEX marking_jobs_session ON marking_jobs (session_id);

-- Automated marking used per account and UTC day.
CREATE TABLE marking_allowance (
    user_id    TEXT NOT NULL REFERENCES users (id),
    day        TEXT NOT NULL,
    pages      BIGINT NOT NULL DEFAULT 0,
    questions  BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day)
);
