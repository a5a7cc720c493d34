-- Search plans: a random sample walks the shuffle order; with the question id in the key, the
-- walk reads no table rows until the page is chosen. (A question's terms are already probed by
-- key: `search_terms` is keyed by kind, value and question id, and its question index holds the
-- whole key.)
DROP INDEX search_questions_shuffle;
CREATE INDEX search_questions_shuffle ON search_questions (shuffle, question_id);
