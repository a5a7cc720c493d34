//! # examkit
//!
//! The command-line tool and HTTP service around [`examkit_engine`]. The engine decides whether a
//! `service-marking-import-v1` submission is valid and computes its scores; this crate reads files,
//! serves HTTP, stores imports and administers accounts and keys. No validation rule lives here.
//!
//! Its modules by layer, each layer using only the layers below it:
//!
//! Commands
//! - [`commands`]: the `examkit` command line, each command a call into the layers below.
//!
//! Adapters
//! - [`server`]: the one place the server is built (the API and the app on one listener) and the
//!   state every request shares.
//! - [`http`]: the `/v1` API: one module per resource.
//! - [`app`]: the signed-in app's pages for teachers, at `/app/`.
//!
//! Domain
//! - [`auth`]: API keys and scopes.
//! - [`password`]: the app's passwords and the bound on checking them.
//! - [`questions`]: the bank as teachers search it, paged by cursors.
//! - [`papers`]: papers: creation, revisions, their two PDFs.
//! - [`marked`]: the typed marked question every surface reads.
//! - [`marking`]: the queue, workers, indexing, placement and markers.
//! - [`review`]: a reviewer's decisions scored again and saved as the next revision.
//! - [`class_sets`]: class sets: print runs, stacks, decisions, names.
//! - [`error`]: the one error registry: each condition's stable code, status and body.
//! - [`fields`]: a problem with one field of a request, as every room reports it.
//! - [`results`]: markbooks, analysis and returned scripts.
//! - [`calibration`]: a marker measured against trusted decisions.
//! - [`assets`]: where stored files live, moving them and sweeping those nothing names.
//! - [`retention`]: pruning the records kept only for a while.
//!
//! Infrastructure
//! - [`store`]: the database (SQLite or PostgreSQL) and the object store.
//! - [`config`]: flags, the environment and the settings they make.
//! - [`telemetry`]: metrics: the recorder and every name recorded.
//! - [`tls`]: TLS for outgoing HTTPS.
//! - [`typeset`]: the typesetter's slots and deadlines.
//! - [`inspect`]: an uploaded file's type and page count.
//! - [`untrusted`]: page processes for files from outside.

pub mod commands;

pub mod app;
pub mod http;
pub mod server;

pub mod assets;
pub mod auth;
pub mod calibration;
pub mod class_sets;
pub mod error;
pub mod fields;
pub mod marked;
pub mod marking;
pub mod papers;
pub mod password;
pub mod questions;
pub mod results;
pub mod retention;
pub mod review;

pub mod config;
pub mod inspect;
pub mod store;
pub mod telemetry;
pub mod tls;
pub mod typeset;
pub mod untrusted;
