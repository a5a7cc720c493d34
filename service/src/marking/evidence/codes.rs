//! Why a guard turned an award `uncertain` ([`GuardCode`], each published in
//! `schemas/openapi.json` and `schemas/README.md`), and a guard's verdict ([`Guard`]).

use serde::Serialize;

macro_rules! guard_codes {
    ($($variant:ident = $code:literal, $doc:literal;)*) => {
        /// Why a guard turned an award `uncertain`: a stable code, published in
        /// `schemas/openapi.json` (a question's `markerRun`) and `schemas/README.md`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum GuardCode {
            $(#[doc = $doc] $variant,)*
        }

        impl GuardCode {
            /// Every code, in the order the guards apply.
            pub const ALL: &'static [GuardCode] = &[$(GuardCode::$variant,)*];

            /// The code as sent.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(GuardCode::$variant => $code,)*
                }
            }

            /// What the code means.
            pub const fn meaning(self) -> &'static str {
                match self {
                    $(GuardCode::$variant => $doc,)*
                }
            }
        }
    };
}

guard_codes! {
    NotStudentWork = "not_student_work", "The evidence is on a page that is not the student's work (a blank page of the script).";
    NoQuote = "no_quote", "The award quotes nothing of the student's work.";
    PageNotAligned = "page_not_aligned", "The page has a clean page but could not be lined up with it (or the fit found cannot be right): nothing on it is verified as the student's writing.";
    PartNotOnPage = "part_not_on_page", "The page is a page of the paper that holds no answer space of the criterion's part.";
    QuoteOutsidePart = "quote_outside_part", "The quote is on the page only outside the part's answer space (another part's or question's space, or no space).";
    NotLocated = "not_located", "The evidence could not be located: no specific quote found in the part's space, no ink or box there.";
    OutsideAnswerSpace = "outside_answer_space", "The evidence box lies outside the part's answer space on the page.";
    BoxTooLarge = "box_too_large", "The evidence box covers more of the page than the writing one mark rests on can (over 15 %).";
    WiderThanAnswerSpace = "wider_than_answer_space", "The evidence box is wider than the answer space it lies in.";
    NoInk = "no_ink", "No ink was added where the evidence is (on a foreign page: no dark marks of writing's size).";
    QuoteNotTranscribed = "quote_not_transcribed", "The vision model's quote for the award is not in its own transcription of the part.";
    InstructionsOnPage = "instructions_on_page", "Text addressed to a marker is written on the page, and the award's quote was not found among the page's words.";
    QuoteNotFound = "quote_not_found", "The award's quote was not found among the page's words, and the deployment requires it (--marker-require-quote).";
    ModelRubric = "model_rubric", "The criterion is in a rubric the model wrote from scheme pages: a person accepts it before its mark counts.";
}

impl std::fmt::Display for GuardCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for GuardCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A guard's verdict on an award.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guard {
    /// The decision stands.
    Stands,
    /// The award becomes `uncertain`: the guard's code, and why in words.
    Uncertain(GuardCode, String),
}
