-- The scripts of a class set: one marking session per copy that has pages, made when marking
-- starts and made again when the copy's pages change (a later decision), so its questions are
-- marked again. The session's work is the stack's own pages: its work assets are views of the
-- stack's files (source_asset_id: the bytes are the source's), holding the index of the pages
-- placed in that copy only.
ALTER TABLE assets ADD COLUMN source_asset_id TEXT REFERENCES assets (id);

CREATE TABLE class_set_scripts (
    session_id     TEXT PRIMARY KEY REFERENCES marking_sessions (id),
    class_set_id   TEXT NOT NULL REFERENCES class_sets (id),
    copy           BIGINT NOT NULL,
    pages_json     TEXT NOT NULL,   -- JSON: the stack pages the script was made from
    missing_json   TEXT NOT NULL,   -- JSON array of the paper pages that were not scanned
    created_at     BIGINT NOT NULL,
    -- When a later script of the copy replaced it, or the copy was said absent: its session's
    -- unfinished work was cancelled then.
    superseded_at  BIGINT
);
-- One current script per copy.
CREATE UNIQUE INDEX class_set_scripts_current ON class_set_scripts (class_set_id, copy)
    WHERE superseded_at IS NULL;

-- Who wrote a copy, as a person said (kind 'student'): the roster copy whose student it is, or
-- NULL for a student not on the roster.
ALTER TABLE class_set_decisions ADD COLUMN student BIGINT;
