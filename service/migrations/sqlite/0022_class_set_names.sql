-- The name a student wrote by hand on the cover of a named set's copy, as the vision-model marker
-- read it: one row per stack page decoded as a copy's cover, made when the page is indexed and
-- filled when the reading job finishes. The written name is a prediction to check against the
-- roster, never a decision: who wrote a copy stands as printed until a person says otherwise.
CREATE TABLE class_set_names (
    asset_id      TEXT NOT NULL REFERENCES assets (id),
    page          BIGINT NOT NULL,
    class_set_id  TEXT NOT NULL REFERENCES class_sets (id),
    state         TEXT NOT NULL,   -- reading | read | failed
    written       TEXT,            -- the name as written; NULL when the line is blank or unread
    error         TEXT,            -- why it could not be read (state failed)
    read_at       BIGINT,
    PRIMARY KEY (asset_id, page)
);
CREATE INDEX class_set_names_set ON class_set_names (class_set_id);
