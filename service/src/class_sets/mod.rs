//! Class sets: a whole class on one paper revision. A class set is a print run: numbered copies,
//! or one named copy per student of a roster, every page of every copy carrying a copy code (the
//! run, the copy, the page) so that a stack scanned together can be split into one script per
//! copy.
//!
//! This room holds the class-set domain: what a request to make a set may say ([`request`]),
//! how a scanned stack is split into scripts and accounted for ([`stack`]), the stack as it
//! stands with people's decisions ([`scans`]), what those decisions may say ([`decision`]), the
//! names written on covers checked against the roster ([`names`]), what people do to a set
//! whoever asks ([`actions`]), what a stack file may add and which scripts a start makes, decided
//! inside the store's transactions ([`rules`]), a set as it stands for whoever shows it
//! ([`overview`]), and the limits where the specification is silent. Its routes are in
//! `http::class_sets` and its pages in `app::class_sets`, its rows in `store::class_sets`;
//! typesetting is `examkit_pdf::Renderer::class_set`.

pub mod actions;
pub mod decision;
pub mod names;
pub mod overview;
pub mod printing;
pub mod request;
pub mod roster;
pub mod rules;
pub mod scans;
pub mod scripts;
pub mod stack;
pub mod students;
pub mod uploads;

pub use request::{NewClassSet, Problem, parse_new};

/// The most copies one class set prints: a year group.
pub const MAX_COPIES: u32 = examkit_pdf::MAX_COPIES;

/// The longest student name, in characters.
pub const MAX_NAME_CHARS: usize = 120;

/// The longest candidate number, in characters.
pub const MAX_CANDIDATE_NUMBER_CHARS: usize = 20;

/// The longest class-set title, in characters (as for sessions and papers).
pub const MAX_TITLE_CHARS: usize = 200;
