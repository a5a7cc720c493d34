-- A class set's scanned stack. Its files are the assets of a marking session of origin
-- 'class_set' (never listed among sessions, never planned or marked itself): indexing reads each
-- page as for any session, and records here every code it decoded on the page and a digest of
-- the page's pixels, from which the stack is split into one script per copy.
ALTER TABLE class_sets ADD COLUMN stack_session_id TEXT REFERENCES marking_sessions (id);

CREATE TABLE class_set_pages (
    asset_id      TEXT NOT NULL REFERENCES assets (id),
    page          BIGINT NOT NULL,
    class_set_id  TEXT NOT NULL REFERENCES class_sets (id),
    codes_json    TEXT NOT NULL,    -- JSON array of the payloads decoded on the page
    fingerprint   TEXT NOT NULL,    -- SHA-256 of the page's pixels as rendered: equal for a rescan
    PRIMARY KEY (asset_id, page)
);
CREATE INDEX class_set_pages_set ON class_set_pages (class_set_id);

-- What people decided about the stack, in the order they decided it; a later decision about the
-- same page or copy stands over an earlier one. Kinds: place (an unknown page is copy/copy_page),
-- choose (of a conflict, this page stands), extra (an extra sheet answers copy/question), absent
-- and present (of a copy).
CREATE TABLE class_set_decisions (
    id            TEXT PRIMARY KEY,
    class_set_id  TEXT NOT NULL REFERENCES class_sets (id),
    seq           BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    asset_id      TEXT,
    page          BIGINT,
    copy          BIGINT,
    copy_page     BIGINT,
    question      TEXT,
    made_by_key   TEXT NOT NULL,    -- the API key, or the app's session, that made it
    made_by_user  TEXT NOT NULL,
    made_at       BIGINT NOT NULL,
    UNIQUE (class_set_id, seq)
);
