-- Saved papers. A paper belongs to one account and is addressed by the client-generated id within
-- it; every saved change is a new row of paper_revisions, which is never updated or deleted, so
-- every revision stays readable and exportable exactly as it was saved. The two PDFs of a revision
-- are stored once prepared (in the database, so every instance serves them).

CREATE TABLE papers (
    user_id      TEXT NOT NULL REFERENCES users (id),
    id           TEXT NOT NULL,    -- the client's UUID, lowercase hyphenated
    revision     BIGINT NOT NULL,  -- the latest revision
    create_hash  TEXT NOT NULL,    -- SHA-256 of the normalised creation body (identical retries)
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (user_id, id)
);
CREATE INDEX papers_recent ON papers (user_id, updated_at);

CREATE TABLE paper_revisions (
    user_id         TEXT NOT NULL,
    paper_id        TEXT NOT NULL,
    revision        BIGINT NOT NULL,
    title           TEXT NOT NULL,
    writing_space   TEXT NOT NULL,   -- smart, none, 1-page, 2-pages or 3-pages
    grade_guide     BIGINT NOT NULL, -- 0 or 1
    questions       TEXT NOT NULL,   -- the pins in paper order, as a JSON array
    question_count  BIGINT NOT NULL,
    total_marks     BIGINT NOT NULL,
    paper_pages     BIGINT NOT NULL, -- the question paper's pages as typeset when saved
    scheme_pages    BIGINT NOT NULL, -- the mark scheme's pages as typeset when saved
    saved_at        BIGINT NOT NULL,
    PRIMARY KEY (user_id, paper_id, revision),
    FOREIGN KEY (user_id, paper_id) REFERENCES papers (user_id, id)
);

CREATE TABLE paper_exports (
    user_id          TEXT NOT NULL,
    paper_id         TEXT NOT NULL,
    revision         BIGINT NOT NULL,
    question_paper   BYTEA NOT NULL,
    mark_scheme      BYTEA NOT NULL,
    prepared_at      BIGINT NOT NULL,
    PRIMARY KEY (user_id, paper_id, revision),
    FOREIGN KEY (user_id, paper_id, revision) REFERENCES paper_revisions (user_id, paper_id, revision)
);
