-- Facts about the database itself, one row each, read and written by the store only.
--
-- `deployment_id`: a random id (a UUID) written the first time a release that knows it opens the
-- database, and kept for good: backups and restores carry it. An object store prefix is bound to
-- the database that first used it through the object `<prefix>/.examkit-deployment`, which names
-- this id; a database whose id is not the one named there refuses to use the prefix, so two
-- deployments pointed at one prefix never sweep each other's files.
CREATE TABLE database_meta (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
