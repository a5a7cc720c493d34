-- Servers keep the keys they authenticate in memory. Every change that can alter what a key
-- authenticates as (revocation, expiry, scopes, names, the account's flags) bumps this one
-- counter, through triggers so that no writer (the API, the app, the command line, another
-- server) can forget to. Each request's rate-limit admission reads the counter in the same
-- transaction, so a server notices a change committed before the request arrived and reads the
-- key again before answering.
CREATE TABLE auth_epoch (
    id     BIGINT PRIMARY KEY CHECK (id = 1),
    epoch  BIGINT NOT NULL
);
INSERT INTO auth_epoch (id, epoch) VALUES (1, 0);

CREATE TRIGGER api_keys_auth_changed AFTER UPDATE OF user_id, name, prefix, fingerprint, scopes, expires_at, revoked_at ON api_keys
WHEN OLD.user_id IS NOT NEW.user_id OR OLD.name IS NOT NEW.name OR OLD.prefix IS NOT NEW.prefix
  OR OLD.fingerprint IS NOT NEW.fingerprint OR OLD.scopes IS NOT NEW.scopes
  OR OLD.expires_at IS NOT NEW.expires_at OR OLD.revoked_at IS NOT NEW.revoked_at
BEGIN
    UPDATE auth_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER api_keys_auth_deleted AFTER DELETE ON api_keys
BEGIN
    UPDATE auth_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER users_auth_changed AFTER UPDATE OF name, verified, restricted, email ON users
WHEN OLD.name IS NOT NEW.name OR OLD.verified IS NOT NEW.verified
  OR OLD.restricted IS NOT NEW.restricted OR OLD.email IS NOT NEW.email
BEGIN
    UPDATE auth_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER users_auth_deleted AFTER DELETE ON users
BEGIN
    UPDATE auth_epoch SET epoch = epoch + 1 WHERE id = 1;
END;
