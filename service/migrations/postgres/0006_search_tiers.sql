-- Text search orders its results by where the words are: all in the title, all in the title or
-- the summary, then anywhere. Each of those sets gets its own text vector and GIN index, so the
-- index answers "every word in the title" exactly (a weighted query against `document` needs
-- every candidate's row read back to check the weights). Both are derived from `document`
-- (title A, summary B, metadata C), so they can never disagree with it.

ALTER TABLE search_questions
    ADD COLUMN title_words TSVECTOR GENERATED ALWAYS AS (ts_filter(document, '{a}')) STORED,
    ADD COLUMN lead_words  TSVECTOR GENERATED ALWAYS AS (ts_filter(document, '{a,b}')) STORED;

CREATE INDEX search_questions_title_words ON search_questions USING GIN (title_words);
CREATE INDEX search_questions_lead_words ON search_questions USING GIN (lead_words);
ANALYZE search_questions;
