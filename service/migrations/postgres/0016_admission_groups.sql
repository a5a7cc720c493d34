-- The rate-limit admissions a server has waiting at one moment, decided in one statement (one
-- round trip for the group instead of one per request). The arguments are parallel
-- space-separated lists, one entry per counter of each request, requests in arrival order:
-- the counter's name, its limit, the end of its window, and the request it belongs to (0, 1, …).
--
-- Every counter the group touches is made to exist and is locked in name order (so two groups,
-- from this server or another, never lock counters in opposite orders); each request is then
-- decided in arrival order on the counts as the ones before it left them (a refused request
-- leaves them as they were), and the counts that changed are written. The transaction commits
-- without waiting for the disk (bookkeeping durability). Returns, for each entry, the count the
-- request saw (as incremented), and the authentication epoch read in the same transaction.
CREATE FUNCTION examkit_admit_group(names TEXT, limits TEXT, window_ends TEXT, owners TEXT,
                                    OUT counts TEXT, OUT epoch BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    entry_names TEXT[] := string_to_array(names, ' ');
    entry_limits BIGINT[] := string_to_array(limits, ' ')::BIGINT[];
    entry_ends BIGINT[] := string_to_array(window_ends, ' ')::BIGINT[];
    entry_owners INT[] := string_to_array(owners, ' ')::INT[];
    n INT := coalesce(array_length(entry_names, 1), 0);
    counter_names TEXT[];
    counter_counts BIGINT[];
    counted BIGINT[];
    head INT;
    tail INT;
    i INT := 1;
    pos INT;
    admitted BOOLEAN;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    INSERT INTO rate_counters (bucket, count, expires_at)
    SELECT e.name, 0, max(e.window_end)
    FROM unnest(entry_names, entry_ends) AS e(name, window_end)
    GROUP BY e.name
    ORDER BY e.name
    ON CONFLICT (bucket) DO NOTHING;
    SELECT array_agg(locked.bucket ORDER BY locked.bucket), array_agg(locked.count ORDER BY locked.bucket)
    INTO counter_names, counter_counts
    FROM (
        SELECT r.bucket, r.count FROM rate_counters r
        WHERE r.bucket = ANY (entry_names)
        ORDER BY r.bucket
        FOR UPDATE
    ) AS locked;
    counted := array_fill(0::BIGINT, ARRAY[greatest(n, 1)]);
    WHILE i <= n LOOP
        head := i;
        WHILE i <= n AND entry_owners[i] = entry_owners[head] LOOP
            i := i + 1;
        END LOOP;
        tail := i - 1;
        admitted := true;
        FOR j IN head .. tail LOOP
            pos := array_position(counter_names, entry_names[j]);
            counted[j] := counter_counts[pos] + 1;
            IF counted[j] > entry_limits[j] THEN
                admitted := false;
            END IF;
        END LOOP;
        IF admitted THEN
            FOR j IN head .. tail LOOP
                counter_counts[array_position(counter_names, entry_names[j])] := counted[j];
            END LOOP;
        END IF;
    END LOOP;
    UPDATE rate_counters r SET count = c.count
    FROM unnest(counter_names, counter_counts) AS c(name, count)
    WHERE r.bucket = c.name AND r.count <> c.count;
    counts := array_to_string(counted[1:n], ' ');
    SELECT auth_epoch.epoch INTO epoch FROM auth_epoch WHERE id = 1;
END;
$$;

-- examkit_admit (0015), one request per statement, stays: servers of the previous version call
-- it while a deployment is being upgraded, and it takes the same locks in the same order.
