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
ALTER TABLE asset_blobs ALTER COLUMN bytes DROP NOT NULL;
ALTER TABLE asset_blobs ADD COLUMN object TEXT REFERENCES stored_objects (sha256);
ALTER TABLE asset_blobs ADD CONSTRAINT asset_blobs_one_place CHECK ((bytes IS NULL) <> (object IS NULL));
CREATE INDEX asset_blobs_object ON asset_blobs (object) WHERE object IS NOT NULL;

-- A revision's two PDFs: each in the database, or in the object store.
ALTER TABLE paper_exports ALTER COLUMN question_paper DROP NOT NULL;
ALTER TABLE paper_exports ALTER COLUMN mark_scheme DROP NOT NULL;
ALTER TABLE paper_exports ADD COLUMN question_paper_object TEXT REFERENCES stored_objects (sha256);
ALTER TABLE paper_exports ADD COLUMN mark_scheme_object TEXT REFERENCES stored_objects (sha256);
ALTER TABLE paper_exports ADD CONSTRAINT paper_exports_question_paper_one_place
    CHECK ((question_paper IS NULL) <> (question_paper_object IS NULL));
ALTER TABLE paper_exports ADD CONSTRAINT paper_exports_mark_scheme_one_place
    CHECK ((mark_scheme IS NULL) <> (mark_scheme_object IS NULL));
CREATE INDEX paper_exports_question_paper_object ON paper_exports (question_paper_object) WHERE question_paper_object IS NOT NULL;
CREATE INDEX paper_exports_mark_scheme_object ON paper_exports (mark_scheme_object) WHERE mark_scheme_object IS NOT NULL;

-- A page image kept for a vision-model marker: in image, or in the object store.
ALTER TABLE asset_pages ADD COLUMN image_object TEXT REFERENCES stored_objects (sha256);
CREATE INDEX asset_pages_image_object ON asset_pages (image_object) WHERE image_object IS NOT NULL;
