-- Servers keep the keys they authenticate in memory. Every change that can alter what a key
-- authenticates as (revocation, expiry, scopes, names, the account's flags) bumps this one
-- counter, through triggers so that no writer (the API, the app, the command line, another
-- server) can forget to. Each request's rate-limit admission reads the counter in the same
-- statement, so a server notices a change committed before the request arrived and reads the
-- key again before answering.
CREATE TABLE auth_epoch (
    id     BIGINT PRIMARY KEY CHECK (id = 1),
    epoch  BIGINT NOT NULL
);
INSERT INTO auth_epoch (id, epoch) VALUES (1, 0);

CREATE FUNCTION examkit_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE auth_epoch SET epoch = epoch + 1 WHERE id = 1;
    RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_auth_changed AFTER UPDATE ON api_keys FOR EACH ROW
WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.name IS DISTINCT FROM NEW.name
   OR OLD.prefix IS DISTINCT FROM NEW.prefix OR OLD.fingerprint IS DISTINCT FROM NEW.fingerprint
   OR OLD.scopes IS DISTINCT FROM NEW.scopes OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
   OR OLD.revoked_at IS DISTINCT FROM NEW.revoked_at)
EXECUTE FUNCTION examkit_auth_changed();

CREATE TRIGGER api_keys_auth_deleted AFTER DELETE ON api_keys FOR EACH ROW
EXECUTE FUNCTION examkit_auth_changed();

CREATE TRIGGER users_auth_changed AFTER UPDATE ON users FOR EACH ROW
WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.verified IS DISTINCT FROM NEW.verified
   OR OLD.restricted IS DISTINCT FROM NEW.restricted OR OLD.email IS DISTINCT FROM NEW.email)
EXECUTE FUNCTION examkit_auth_changed();

CREATE TRIGGER users_auth_deleted AFTER DELETE ON users FOR EACH ROW
EXECUTE FUNCTION examkit_auth_changed();

-- One request's rate-limit admission in one statement (one round trip): every counter that
-- applies is incremented in the order given (callers sort the names, so two admissions never
-- lock counters in opposite orders), and when any goes over its limit all are put back before
-- the statement ends, so no other admission ever sees a refused request's increments. The
-- transaction commits without waiting for the disk (bookkeeping durability). Returns the counts
-- (as incremented, before any putting back), whether the request is admitted, and the
-- authentication epoch.
CREATE FUNCTION examkit_admit(names TEXT, limits TEXT, window_ends TEXT,
                              OUT counts TEXT, OUT admitted BOOLEAN, OUT epoch BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    bucket_names TEXT[] := string_to_array(names, ' ');
    bucket_limits BIGINT[] := string_to_array(limits, ' ')::BIGINT[];
    bucket_ends BIGINT[] := string_to_array(window_ends, ' ')::BIGINT[];
    counted BIGINT[] := '{}';
    c BIGINT;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    admitted := true;
    FOR i IN 1 .. coalesce(array_length(bucket_names, 1), 0) LOOP
        INSERT INTO rate_counters (bucket, count, expires_at)
        VALUES (bucket_names[i], 1, bucket_ends[i])
        ON CONFLICT (bucket) DO UPDATE SET count = rate_counters.count + 1
        RETURNING rate_counters.count INTO c;
        counted := counted || c;
        IF c > bucket_limits[i] THEN
            admitted := false;
        END IF;
    END LOOP;
    IF NOT admitted THEN
        UPDATE rate_counters SET count = rate_counters.count - 1
        WHERE bucket = ANY (bucket_names);
    END IF;
    counts := array_to_string(counted, ' ');
    SELECT auth_epoch.epoch INTO epoch FROM auth_epoch WHERE id = 1;
END;
$$;
