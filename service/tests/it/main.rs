//! The service's integration tests, in one binary: each module is the suite of one surface or
//! concern (`app`, `http_api`, `class_set_stacks`, …), every one sharing the helpers of `common`.
//!
//! One binary links the service (typst, PDF reading, OCR, both databases) once rather than once
//! a suite. Run one suite with its module path as the filter, for example
//! `cargo test -p examkit --test it app::` or `cargo test -p examkit --test it vision_marker::`;
//! `tests/run-all.sh` runs them so, suite by suite, and prints each suite's time.

#[macro_use]
mod common;

mod app;
mod automated;
mod automated_e2e;
mod backup;
mod bank_cli;
mod bank_store;
mod bodies;
mod calibration;
mod class_set_stacks;
mod cli_validate;
mod crash;
mod harness;
mod health;
mod hostile_files;
mod http_api;
mod marking_questions;
mod metrics;
mod objects;
mod papers;
mod published;
mod qualification;
mod questions;
mod queue;
mod readme;
mod retention;
mod scans;
mod serve_smoke;
mod shape;
mod sign_in_limits;
mod users_cli;
mod vision_marker;
mod workers;
