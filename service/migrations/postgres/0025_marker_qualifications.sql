-- A marker qualifies before it marks live (`--marker-qualify`).
--
-- `marker_qualifications`: each calibration saved with `examkit marker calibrate --save`, kept
-- as history; the latest row of a (marker, model) is the one that counts. `model` is NULL for
-- markers without one. `agreed` of `criteria` is the agreement (also kept as `agreement`),
-- `reference_digest` the SHA-256 of the reference set's files, `min_agreement` the bar the
-- calibration was run against, `passed` (0/1) whether it met that bar.
CREATE TABLE marker_qualifications (
    id                    TEXT PRIMARY KEY,
    marker                TEXT NOT NULL,
    model                 TEXT,
    criteria              BIGINT NOT NULL,
    agreed                BIGINT NOT NULL,
    agreement             DOUBLE PRECISION NOT NULL,
    kappa                 DOUBLE PRECISION,
    false_awards          BIGINT NOT NULL,
    non_work_page_awards  BIGINT NOT NULL,
    scripts               BIGINT NOT NULL,
    reference_digest      TEXT NOT NULL,
    min_agreement         DOUBLE PRECISION NOT NULL,
    passed                BIGINT NOT NULL,
    created_at            BIGINT NOT NULL
);
CREATE INDEX marker_qualifications_latest ON marker_qualifications (marker, model, created_at);

-- Seeded reference questions (`--marker-seed-every`) the live marker marked, each compared with
-- its trusted decisions and counted against the qualification in force then. `drifted` (0/1)
-- says the seeds had fallen below the bar (or this one made a false award) when it was saved:
-- the qualification is spent, and live marking stops until a newer one is saved.
CREATE TABLE marker_seeds (
    id                TEXT PRIMARY KEY,
    qualification_id  TEXT NOT NULL REFERENCES marker_qualifications (id),
    seed              TEXT NOT NULL,
    criteria          BIGINT NOT NULL,
    agreed            BIGINT NOT NULL,
    false_awards      BIGINT NOT NULL,
    failed            BIGINT NOT NULL,
    drifted           BIGINT NOT NULL,
    created_at        BIGINT NOT NULL
);
CREATE INDEX marker_seeds_qualification ON marker_seeds (qualification_id, created_at);
