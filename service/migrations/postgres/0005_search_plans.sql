-- Search plans: keys that answer a search's probes from the index alone, and statistics that know
-- which values belong to which kinds.

-- A random sample walks the shuffle order; with the question id in the key, the walk reads no
-- table rows until the page is chosen.
DROP INDEX search_questions_shuffle;
CREATE INDEX search_questions_shuffle ON search_questions (shuffle, question_id);

-- A question's terms, probed for every row a filtered search walks: with the kind and value in
-- the key, a probe is one index lookup.
DROP INDEX search_terms_question;
CREATE INDEX search_terms_question ON search_terms (question_id, kind, value);

-- A value such as 'further-maths' belongs to one kind. Without statistics over the pair the
-- planner multiplies the two columns' frequencies, underestimates a broad filter tenfold and
-- reads every matching id instead of walking the order and probing.
CREATE STATISTICS search_terms_kind_value (mcv) ON kind, value FROM search_terms;
ANALYZE search_terms;
