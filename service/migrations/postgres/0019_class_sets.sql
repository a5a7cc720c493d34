-- Class sets: a print run of a saved paper revision for a whole class. Every page of every copy
-- carries a copy code naming the set (its id), the copy and the page; the set's PDF, every copy
-- in print order, is typeset once when the set is made and kept like a revision's exports (in
-- the database, or in the object store).
CREATE TABLE class_sets (
    id              TEXT PRIMARY KEY,   -- UUID, lowercase hyphenated: the print run of the codes
    user_id         TEXT NOT NULL REFERENCES users (id),
    paper_id        TEXT NOT NULL,
    revision        BIGINT NOT NULL,
    title           TEXT NOT NULL,
    copies          BIGINT NOT NULL,    -- 1 to 300
    named           BIGINT NOT NULL,    -- 1 when made from a roster, else 0
    paper_pages     BIGINT NOT NULL,    -- the question paper's pages
    pages_per_copy  BIGINT NOT NULL,    -- the paper's pages, plus a blank back when odd
    pdf             BYTEA,
    pdf_object      TEXT REFERENCES stored_objects (sha256),
    pdf_size        BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    FOREIGN KEY (user_id, paper_id, revision) REFERENCES paper_revisions (user_id, paper_id, revision),
    CHECK ((pdf IS NULL) <> (pdf_object IS NULL))
);
CREATE INDEX class_sets_recent ON class_sets (user_id, created_at);
CREATE INDEX class_sets_pdf_object ON class_sets (pdf_object) WHERE pdf_object IS NOT NULL;

-- The copies of a set, and for a named copy the student it was printed for (a prediction: who
-- wrote the script is decided when it is read).
CREATE TABLE class_set_copies (
    class_set_id      TEXT NOT NULL REFERENCES class_sets (id),
    copy              BIGINT NOT NULL,
    name              TEXT,
    candidate_number  TEXT,
    PRIMARY KEY (class_set_id, copy)
);
