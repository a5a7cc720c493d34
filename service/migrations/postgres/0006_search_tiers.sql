-- Text search orders its results by where the words are: all in the title, all in the title or
-- the summary, then anywhere. Each of those sets gets its own unweighted text vector and GIN
-- index, so the index answers "every word in the title" exactly (a weighted query against
-- `document` needs every candidate's row read back to check the weights).

ALTER TABLE search_questions
    ADD COLUMN title_words TSVECTOR,   -- the title, English stems
    ADD COLUMN lead_words  TSVECTOR;   -- the title and the summary, English stems

UPDATE search_questions SET
    title_words = to_tsvector('english', (item::jsonb) ->> 'title'),
    lead_words  = to_tsvector('english', (item::jsonb) ->> 'title')
               || to_tsvector('english', (item::jsonb) ->> 'summary');

ALTER TABLE search_questions
    ALTER COLUMN title_words SET NOT NULL,
    ALTER COLUMN lead_words SET NOT NULL;

CREATE INDEX search_questions_title_words ON search_questions USING GIN (title_words);
CREATE INDEX search_questions_lead_words ON search_questions USING GIN (lead_words);
ANALYZE search_questions;
