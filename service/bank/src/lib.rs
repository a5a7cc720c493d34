//! # examkit-bank
//!
//! The question bank format `examkit-question-bank-v1` (see `schemas/question-bank.schema.json` and
//! `service/bank/README.md`): the typed model of a bank file. The service stores and serves banks;
//! the PDF renderer typesets revisions of this model. Nothing here touches a database or HTTP.

pub mod model;

pub use model::*;
