//! Results out of examkit: what a class's marked scripts come to, read from the one model of a
//! marked question ([`crate::marked::MarkedQuestion`]).
//!
//! - [`class`] loads a class's results: a class set's students in roster order (or any list of
//!   sessions made from one paper revision), each with their script's marked questions and who
//!   last decided each criterion;
//! - [`markbook`] lays those results out as sheets of cells (marks, criteria, a long list of
//!   every decision), [`analysis`] counts what the class got and lost;
//! - [`csv`] and [`xlsx`] write the sheets, every text a spreadsheet would read as a formula
//!   written as text;
//! - [`returned`] typesets each student's marked script as a PDF to hand back (a cover with the
//!   marks, then the scanned pages with a tick or a cross at each piece of evidence), alone, for
//!   a whole class in one PDF, or one PDF per student in a zip archive.

pub mod analysis;
pub mod class;
pub mod csv;
pub mod download;
pub mod markbook;
pub mod returned;
pub mod xlsx;

#[cfg(test)]
mod tests;
