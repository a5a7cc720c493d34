-- Automated marking of questions. A marking question of an automated session is created `queued`
-- with its request (label, files and page selections); a worker marks it and saves the question
-- (in the import contract's shape) and the engine's result in the transaction that finishes its
-- job. Reviews keep the first saved question in original_json.
ALTER TABLE marking_questions ADD COLUMN request_json TEXT;
ALTER TABLE marking_questions ADD COLUMN error_json TEXT;
ALTER TABLE marking_questions ADD COLUMN marker TEXT;
ALTER TABLE marking_questions ADD COLUMN original_json TEXT;
ALTER TABLE marking_questions ADD COLUMN job_id TEXT;
-- 1 when a cancel was asked for while the question was running.
ALTER TABLE marking_questions ADD COLUMN cancel_requested BIGINT NOT NULL DEFAULT 0;
CREATE INDEX marking_questions_user ON marking_questions (user_id, id);
