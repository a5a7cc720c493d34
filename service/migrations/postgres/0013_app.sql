-- The signed-in app for teachers.
--
-- An account signs in with its email (stored trimmed and lower-case, unique) and a password kept
-- only as an Argon2id PHC string. Accounts made before this migration have neither until an
-- operator gives them one (`examkit users set-password`); their API keys keep working.
ALTER TABLE users ADD COLUMN email TEXT;
ALTER TABLE users ADD COLUMN password_hash TEXT;
CREATE UNIQUE INDEX users_email ON users (email);

-- Browser sessions, kept here so that every instance sharing the database knows them. The cookie
-- holds a random secret; only its SHA-256 is stored. A session ends at its absolute expiry, after
-- an idle period without requests, at sign-out, or when the account's password changes.
CREATE TABLE app_sessions (
    id_hash       TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id),
    csrf_token    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL
);
CREATE INDEX app_sessions_user ON app_sessions (user_id);
CREATE INDEX app_sessions_expiry ON app_sessions (expires_at);

-- Who changed each decision of a marking question, and when: one row per criterion a review
-- changed, at the revision the review made. A criterion without a row keeps its marker's decision.
CREATE TABLE review_log (
    question_id   TEXT NOT NULL REFERENCES marking_questions (id),
    revision      BIGINT NOT NULL,
    criterion_id  TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    reviewer_kind TEXT NOT NULL,
    reviewer_name TEXT NOT NULL,
    decided_at    BIGINT NOT NULL,
    PRIMARY KEY (question_id, revision, criterion_id)
);
