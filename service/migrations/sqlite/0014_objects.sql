-- Files in an object store (a directory, or an S3-compatible bucket) instead of the database.
--
-- An object is named by the SHA-256 of its bytes. Its row here is written (claimed) before the
-- object itself, and the object before any row that names it, so a row never names a missing
-- object: an interrupted upload leaves at most a claimed object that nothing names, which the
-- sweep deletes after a grace period. The sweep marks the row `deleting` in one transaction (only
-- when no row names the object and it was not touched within the grace period), then deletes the
-- object, then the row; a writer that finds its object `deleting` waits and writes it again.
CREATE TABLE stored_objects (
    sha256      TEXT PRIMARY KEY,
    size_bytes  BIGINT NOT NULL,
    -- live, or deleting
    state       TEXT NOT NULL,
    touched_at  BIGINT NOT NULL
);

-- An uploaded file's bytes: in the database (bytes), or in the object store (object).
CREATE TABLE asset_blobs_moved (
    asset_id  TEXT PRIMARY KEY REFERENCES assets (id),
    bytes     BLOB,
    object    TEXT REFERENCES stored_objects (sha256),
    CHECK ((bytes IS NULL) <> (object IS NULL))
);
INSERT INTO asset_blobs_moved (asset_id, bytes) SELECT asset_id, bytes FROM asset_blobs;
DROP TABLE asset_blobs;
ALTER TABLE asset_blobs_moved RENAME TO asset_blobs;
CREATE INDEX asset_blobs_object ON asset_blobs (object) WHERE object IS NOT NULL;

-- A revision's two PDFs: each in the database, or in the object store.
CREATE TABLE paper_exports_moved (
    user_id              TEXT NOT NULL,
    paper_id             TEXT NOT NULL,
    revision             BIGINT NOT NULL,
    question_paper       BLOB,
    mark_scheme          BLOB,
    prepared_at          BIGINT NOT NULL,
    layout_json          TEXT,
    question_paper_object TEXT REFERENCES stored_objects (sha256),
    mark_scheme_object   TEXT REFERENCES stored_objects (sha256),
    PRIMARY KEY (user_id, paper_id, revision),
    FOREIGN KEY (user_id, paper_id, revision) REFERENCES paper_revisions (user_id, paper_id, revision),
    CHECK ((question_paper IS NULL) <> (question_paper_object IS NULL)),
    CHECK ((mark_scheme IS NULL) <> (mark_scheme_object IS NULL))
);
INSERT INTO paper_exports_moved (user_id, paper_id, revision, question_paper, mark_scheme, prepared_at, layout_json)
    SELECT user_id, paper_id, revision, question_paper, mark_scheme, prepared_at, layout_json FROM paper_exports;
DROP TABLE paper_exports;
ALTER TABLE paper_exports_moved RENAME TO paper_exports;
CREATE INDEX paper_exports_question_paper_object ON paper_exports (question_paper_object) WHERE question_paper_object IS NOT NULL;
CREATE INDEX paper_exports_mark_scheme_object ON paper_exports (mark_scheme_object) WHERE mark_scheme_object IS NOT NULL;

-- A page image kept for a vision-model marker: in image, or in the object store.
ALTER TABLE asset_pages ADD COLUMN image_object TEXT REFERENCES stored_objects (sha256);
CREATE INDEX asset_pages_image_object ON asset_pages (image_object) WHERE image_object IS NOT NULL;
