//! Why a guard turned an award `uncertain` ([`GuardCode`], each published in
//! `schemas/openapi.json` and `schemas/README.md`), and a guard's verdict ([`Guard`]).

examkit_engine::code_table! {
    /// Why a guard turned an award `uncertain`: a stable code, published in
    /// `schemas/openapi.json` (a question's `markerRun`) and `schemas/README.md`, in the order
    /// the guards apply.
    pub enum GuardCode {
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
}

/// A guard's verdict on an award.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guard {
    /// The decision stands.
    Stands,
    /// The award becomes `uncertain`: the guard's code, and why in words.
    Uncertain(GuardCode, String),
}

#[cfg(test)]
mod tests {
    use super::GuardCode;

    #[test]
    fn every_guard_code_is_spelled_as_published_and_round_trips() {
        let spelled = [
            "not_student_work",
            "no_quote",
            "page_not_aligned",
            "part_not_on_page",
            "quote_outside_part",
            "not_located",
            "outside_answer_space",
            "box_too_large",
            "wider_than_answer_space",
            "no_ink",
            "quote_not_transcribed",
            "instructions_on_page",
            "quote_not_found",
            "model_rubric",
        ];
        let ours: Vec<&str> = GuardCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(ours, spelled);
        for code in GuardCode::ALL {
            let json = serde_json::to_string(code).expect("serialises");
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            assert_eq!(serde_json::from_str::<GuardCode>(&json).ok(), Some(*code));
            assert_eq!(code.as_str().parse::<GuardCode>(), Ok(*code));
        }
        assert!(serde_json::from_str::<GuardCode>("\"NoInk\"").is_err());
    }
}
