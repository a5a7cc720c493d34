//! Marked scripts returned to their students, as PDFs.
//!
//! A [`ReturnedScript`] is one student's script as the store has it once marked: the student,
//! the paper, the date it is returned, its marked questions in paper order and its pages in
//! order, each either the scanned page as the review page displays it or a placeholder for a
//! page of the paper that was not scanned. [`load_script`] reads one from a marking session.
//!
//! [`typeset`] makes its PDF: a cover with the marks of each question (and each criterion's
//! outcome), the total and the percentage; then every page, a scanned page as its image, with a
//! tick (awarded), a cross (withheld) or a question mark (uncertain) at each piece of evidence
//! and the criterion's code beside it, and each question's mark in the margin of the page holding
//! its evidence. Evidence boxes are placed from the same fractions of the same displayed page
//! image the review page draws them on, turned upright as the review page first shows the page.
//!
//! A script is returned as final only when every question is marked and needs no review
//! ([`ReturnedError::NotFinal`] names the others); a draft is always made, and says "Draft" on
//! every page.
//!
//! For a class, [`class_pdf`] puts the scripts in one PDF, each starting on an odd page, and
//! [`class_zip`] writes one PDF per student into a zip archive; both typeset one script at a
//! time and hold only the script at hand and what they write to ([`ClassPdf`] writes each
//! script's objects out as it is appended; it and [`ClassZip`] serve callers that load scripts
//! one by one, as [`load_class_pdf`] and [`load_class_zip`] do from the store, writing to a
//! temporary file that the service then streams).
//!
//! Typesetting is CPU-bound (a few hundred milliseconds a script): the synchronous functions
//! are for a blocking thread; the loaders run it on tokio's blocking pool.

pub mod builds;
mod class;
mod draw;
mod load;

#[cfg(test)]
mod tests;

pub use class::{
    ClassFile, ClassPdf, ClassScript, ClassZip, Unfinished, class_pdf, class_zip, entry_name,
    load_class_pdf, load_class_zip, unfinished,
};
pub use draw::{typeset, typeset_owned};
pub use load::{ScriptHeading, displayed_page_image, load_script, load_session_script, upright};

use crate::marked::{MarkedError, MarkedQuestion, QuestionStatus};
use crate::store::StoreError;

/// One student's marked script, ready to typeset.
#[derive(Debug, Clone, PartialEq)]
pub struct ReturnedScript {
    /// The student's name, as printed on the cover and at the top of every page.
    pub student: String,
    /// The paper's title.
    pub paper_title: String,
    /// The date printed on the cover, as written (the day it is returned).
    pub date: String,
    /// The script's marked questions, in paper order.
    pub questions: Vec<MarkedQuestion>,
    /// Its pages in order.
    pub pages: Vec<ScriptPage>,
}

/// One page of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptPage {
    /// A scanned page.
    Scanned(ScannedPage),
    /// A page of the paper that was not scanned: a placeholder says so.
    NotScanned {
        /// The page of the paper, from 1.
        paper_page: u32,
    },
}

/// A scanned page: the displayed page image, as the review page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedPage {
    /// The page id evidence names, `<asset id>:p<n>`.
    pub page_id: String,
    /// What the page is, printed under it (`Page 2`, `Extra sheet · question 3`).
    pub caption: String,
    /// The image, JPEG or PNG: evidence boxes are fractions of it.
    pub image: Vec<u8>,
    /// Its width in pixels.
    pub width_px: u32,
    /// Its height in pixels.
    pub height_px: u32,
    /// Quarter turns clockwise that show the page upright (0 to 3), as the review page first
    /// turns it: the image and its evidence boxes turn together.
    pub quarter_turns: u8,
}

/// Why a script was not returned: each variant has a stable code ([`ReturnedError::code`]).
#[derive(Debug, thiserror::Error)]
pub enum ReturnedError {
    /// Some questions are not marked finally (waiting, being marked, needing review, failed or
    /// cancelled): the script is returned only as a draft. The labels in paper order.
    #[error("questions {} are not marked finally: return the script as a draft", .questions.join(", "))]
    NotFinal {
        /// The labels of the questions not marked finally.
        questions: Vec<String>,
    },
    /// The script has no question: nothing of it is marked.
    #[error("the script has no marked question")]
    NothingMarked,
    /// Scripts of a class are not marked finally: the class's scripts are returned only as
    /// drafts. Each with its student, in the class's order.
    #[error("{} scripts are not marked finally: return them as drafts", .scripts.len())]
    ClassNotFinal {
        /// The scripts not marked finally.
        scripts: Vec<Unfinished>,
    },
    /// No such marking session of this account.
    #[error("no such marking session")]
    NotFound,
    /// A question's stored marking cannot be read.
    #[error("question {label}: {source}")]
    UnreadableQuestion {
        /// The question's label.
        label: String,
        /// Why.
        source: MarkedError,
    },
    /// What a class-set script was made from cannot be read, or names a file the session has no
    /// view of.
    #[error("the script's pages cannot be read: {0}")]
    UnreadableScript(String),
    /// A page image cannot be read or rendered.
    #[error("page {page_id}: {reason}")]
    PageImage {
        /// The page.
        page_id: String,
        /// Why.
        reason: String,
    },
    /// Typesetting failed.
    #[error("typesetting the script failed: {0}")]
    Typeset(#[from] examkit_pdf::RenderError),
    /// The scripts' PDFs could not be joined.
    #[error("joining the scripts' PDFs failed: {0}")]
    Join(String),
    /// The class's file could not be written.
    #[error("writing the class's file failed: {0}")]
    Output(String),
    /// The zip archive could not be written.
    #[error("writing the archive failed: {0}")]
    Archive(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A typesetting task failed (a panic in the typesetter).
    #[error("the typesetting task failed: {0}")]
    Task(String),
}

impl ReturnedError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            ReturnedError::NotFinal { .. } => "not_final",
            ReturnedError::NothingMarked => "nothing_marked",
            ReturnedError::ClassNotFinal { .. } => "class_not_final",
            ReturnedError::NotFound => "not_found",
            ReturnedError::UnreadableQuestion { .. } => "unreadable_question",
            ReturnedError::UnreadableScript(_) => "unreadable_script",
            ReturnedError::PageImage { .. } => "page_image",
            ReturnedError::Typeset(_) => "typeset_failed",
            ReturnedError::Join(_) => "join_failed",
            ReturnedError::Output(_) => "output_failed",
            ReturnedError::Archive(_) => "archive_failed",
            ReturnedError::Store(_) => "store",
            ReturnedError::Task(_) => "task_failed",
        }
    }
}

impl ReturnedScript {
    /// The labels of the questions not marked finally, in paper order: every question but those
    /// completed (marked with no review flag).
    pub fn unfinished(&self) -> Vec<String> {
        self.questions
            .iter()
            .filter(|q| q.status != QuestionStatus::Completed)
            .map(|q| q.label.clone())
            .collect()
    }

    /// Whether the script may be returned as final (`draft` false): every question completed.
    pub fn check_final(&self) -> Result<(), ReturnedError> {
        if self.questions.is_empty() {
            return Err(ReturnedError::NothingMarked);
        }
        let questions = self.unfinished();
        if questions.is_empty() {
            Ok(())
        } else {
            Err(ReturnedError::NotFinal { questions })
        }
    }
}
