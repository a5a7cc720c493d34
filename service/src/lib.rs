//! # examkit
//!
//! The command-line tool and HTTP service around [`examkit_engine`]. The engine decides whether a
//! `service-marking-import-v1` submission is valid and computes its scores; this crate reads files,
//! serves HTTP, stores imports and administers accounts and keys. No validation rule lives here.

pub mod admin;
pub mod app;
pub mod assets;
pub mod auth;
pub mod backup;
pub mod bank_admin;
pub mod calibration;
pub mod class_sets;
pub mod cli;
pub mod config;
pub mod http;
pub mod inspect;
pub mod marked;
pub mod marking;
pub mod papers;
pub mod password;
pub mod questions;
pub mod results;
pub mod retention;
pub mod review;
pub mod serve;
pub mod store;
pub mod telemetry;
pub mod tls;
pub mod typeset;
pub mod untrusted;
pub mod validate;
