-- The words of each text vector of the search index, with how many indexed questions hold each.
-- A text search looks its words up here first: a tier whose vector holds no word beginning with
-- one of the query's words is empty, and is skipped without reading the index (a word found only
-- in metadata, a word in no question). Kept exact by the indexer, in the same transaction as the
-- rows it counts.

CREATE TABLE search_vocabulary (
    -- The vector: `title_words`, `lead_words` or `document`.
    field     TEXT NOT NULL,
    word      TEXT COLLATE "C" NOT NULL,
    -- Zero only inside an indexing transaction, which deletes such rows before it commits.
    questions BIGINT NOT NULL,
    PRIMARY KEY (field, word)
);

INSERT INTO search_vocabulary (field, word, questions)
SELECT 'title_words', u.lexeme, count(*) FROM search_questions s, unnest(s.title_words) u
GROUP BY u.lexeme
UNION ALL
SELECT 'lead_words', u.lexeme, count(*) FROM search_questions s, unnest(s.lead_words) u
GROUP BY u.lexeme
UNION ALL
SELECT 'document', u.lexeme, count(*) FROM search_questions s, unnest(s.document) u
GROUP BY u.lexeme;
