-- When a worker last claimed each job: the queue serves first the account that has had the
-- least work claimed recently, so one account's class stack cannot hold up another's page.
ALTER TABLE marking_jobs ADD COLUMN claimed_at BIGINT;
CREATE INDEX marking_jobs_claimed ON marking_jobs (user_id, claimed_at);
