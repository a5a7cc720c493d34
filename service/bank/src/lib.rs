//! # examkit-bank
//!
//! The question bank format `examkit-question-bank-v1` (see `schemas/question-bank.schema.json` and
//! `service/bank/README.md`): the typed model of a bank file ([`model`]), reading and checking a
//! whole bank ([`load`], with the cross-file rules in [`rules`], what both share in [`loaded`] and
//! the SVG check in [`svg`]), the digests pins and the importer use ([`digest`]) and the embedded
//! sample bank ([`sample`]).
//! Nothing here touches a database or HTTP; the only I/O is reading a bank's own files.

pub mod digest;
pub mod error;
pub mod generate;
pub mod load;
pub mod loaded;
pub mod model;
pub mod rules;
pub mod sample;
pub mod svg;

pub use error::BankError;
pub use load::{AssetData, Bank, LoadedFile, MemoryBank, load, load_with};
pub use model::*;
