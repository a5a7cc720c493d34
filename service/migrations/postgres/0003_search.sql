-- The search index: one row per question that has a published revision (its latest), rebuilt by
-- `store::search::index_questions` inside every bank import, so it never disagrees with the bank.

CREATE TABLE search_questions (
    question_id  TEXT PRIMARY KEY COLLATE "C",  -- also the deterministic result order
    revision     BIGINT NOT NULL,               -- the latest published revision
    shuffle      BIGINT NOT NULL,               -- a fixed pseudo-random position, for random samples
    marks        BIGINT NOT NULL,
    document     TSVECTOR NOT NULL,             -- title (A), summary (B), metadata (C), English stems
    item         TEXT NOT NULL                  -- the search result item, as JSON
);
CREATE INDEX search_questions_shuffle ON search_questions (shuffle);
CREATE INDEX search_questions_marks ON search_questions (marks, question_id);
CREATE INDEX search_questions_document ON search_questions USING GIN (document);

-- Exact-match attributes, one row per value: course, level, subject, board, year, module (every
-- eligible module profile), tag, topic, subtopic, difficulty, frequency.
CREATE TABLE search_terms (
    kind         TEXT NOT NULL,
    value        TEXT NOT NULL,
    question_id  TEXT NOT NULL COLLATE "C",
    PRIMARY KEY (kind, value, question_id)
);
CREATE INDEX search_terms_question ON search_terms (question_id);

-- Published questions per facet option, recomputed by every index update.
CREATE TABLE search_facet_counts (
    kind   TEXT NOT NULL,
    value  TEXT NOT NULL,
    count  BIGINT NOT NULL,
    PRIMARY KEY (kind, value)
);

-- Search cursors: where the next page starts, for one account and one set of filters.
CREATE TABLE search_cursors (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    digest      TEXT NOT NULL,    -- SHA-256 of the account and the normalised filters
    after_key   TEXT NOT NULL,    -- the last question id served (order without q)
    position    BIGINT NOT NULL,  -- how many results were served before the next page
    expires_at  BIGINT NOT NULL
);
CREATE UNIQUE INDEX search_cursors_page ON search_cursors (user_id, digest, position, after_key);
CREATE INDEX search_cursors_expiry ON search_cursors (expires_at);
