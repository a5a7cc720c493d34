-- The question bank: facet options, questions, their complete revisions and diagram files, and
-- each account's favourites. Revisions are stored whole (the bank format's revision object as JSON),
-- so a pinned revision can always be served and typeset exactly as it was imported.

CREATE TABLE bank_facets (
    kind      TEXT NOT NULL,   -- course, board, module, topic or subtopic
    id        TEXT NOT NULL,   -- stable id used in search filters
    label     TEXT NOT NULL,   -- display label; a later import may change it
    position  BIGINT NOT NULL, -- display order within the kind
    topic     TEXT,            -- a subtopic's topic
    level     TEXT,            -- a course's level
    subject   TEXT,            -- a course's subject
    PRIMARY KEY (kind, id)
);

CREATE TABLE bank_questions (
    id                TEXT PRIMARY KEY,
    latest_published  BIGINT        -- the revision search serves; NULL when none is published
);

CREATE TABLE bank_revisions (
    question_id      TEXT NOT NULL REFERENCES bank_questions (id),
    revision         BIGINT NOT NULL,
    status           TEXT NOT NULL,  -- draft, published or withdrawn
    digest           TEXT NOT NULL,  -- SHA-256 of every field but status, asset files by bytes
    content_version  TEXT NOT NULL,  -- SHA-256 of the content and its diagram files (in pins)
    scheme_version   TEXT NOT NULL,  -- SHA-256 of the mark scheme (in pins)
    title            TEXT NOT NULL,
    marks            BIGINT NOT NULL,
    body             TEXT NOT NULL,  -- the revision object of the bank format, as JSON
    imported_at      BIGINT NOT NULL,
    PRIMARY KEY (question_id, revision)
);

-- A diagram file. One id names one file and belongs to one question; revisions share unchanged files.
CREATE TABLE bank_assets (
    id           TEXT PRIMARY KEY,
    question_id  TEXT NOT NULL REFERENCES bank_questions (id),
    media_type   TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    bytes        BLOB NOT NULL
);

CREATE TABLE bank_revision_assets (
    question_id  TEXT NOT NULL,
    revision     BIGINT NOT NULL,
    asset_id     TEXT NOT NULL REFERENCES bank_assets (id),
    PRIMARY KEY (question_id, revision, asset_id),
    FOREIGN KEY (question_id, revision) REFERENCES bank_revisions (question_id, revision)
);

-- Favourites belong to an account and are set with `examkit favourites add|remove`.
CREATE TABLE favourites (
    user_id      TEXT NOT NULL REFERENCES users (id),
    question_id  TEXT NOT NULL REFERENCES bank_questions (id),
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (user_id, question_id)
);
CREATE INDEX favourites_question ON favourites (question_id);
