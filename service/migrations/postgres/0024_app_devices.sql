-- Browsers that have signed in to an account (the hash of a long-lived cookie's secret): their
-- sign-ins are not held by the account-wide count of failed sign-ins, which anyone who knows the
-- account's email could otherwise run up from many addresses to keep its teacher out.
CREATE TABLE app_devices (
    token_hash  TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id),
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX app_devices_user ON app_devices (user_id, expires_at);
