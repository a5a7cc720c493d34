-- examkit_admit_group keeps its plans from one call to the next.
--
-- Connections force a custom plan for every statement (searches are planned for their values),
-- and inside a PL/pgSQL function that means every statement and every expression of the loop is
-- planned again on each call: half of what a group cost. The function's statements touch the
-- counters only by their primary key, so a generic plan is as good as a custom one; seq scans
-- are turned off for the call so that a plan made while the counters table was still small
-- never scans it once it is large.
ALTER FUNCTION examkit_admit_group(TEXT, TEXT, TEXT, TEXT)
    SET plan_cache_mode = auto
    SET enable_seqscan = off;
