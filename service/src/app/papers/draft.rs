//! A paper being built, as the builder's form holds it (each question a hidden pin, in order):
//! read from the form, moved or removed from, and what changed between two revisions, in words.

use super::pins::read_pin;
use super::space_text;
use crate::app::{AppError, Form};
use crate::store::papers::{PaperContent, Pin, StoredPaper};

/// A paper being built, as the form holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Draft {
    /// The revision the draft was made from.
    pub(super) base: i64,
    pub(super) content: PaperContent,
}

impl Draft {
    pub(super) fn of(paper: &StoredPaper) -> Draft {
        Draft {
            base: paper.revision,
            content: paper.content.clone(),
        }
    }

    pub(super) fn read(form: &Form) -> Result<Draft, AppError> {
        let base = form
            .get("base")
            .and_then(|b| b.parse().ok())
            .ok_or_else(|| {
                AppError::BadForm("the revision the change was made from is missing".into())
            })?;
        let questions = form
            .all("pin")
            .into_iter()
            .map(|p| {
                read_pin(p).ok_or_else(|| AppError::BadForm(format!("{p:?} is not a question pin")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Draft {
            base,
            content: PaperContent {
                title: form.get("title").unwrap_or_default().trim().to_owned(),
                writing_space: form.get("writing_space").unwrap_or("smart").to_owned(),
                grade_guide: form.get("grade_guide") == Some("on"),
                questions,
            },
        })
    }

    /// The draft after a move or removal; `None` for an action that changes nothing.
    pub(super) fn apply(mut self, action: &str) -> Option<Draft> {
        let (verb, index) = action.split_once(':')?;
        let i: usize = index.parse().ok()?;
        let q = &mut self.content.questions;
        match verb {
            "up" if i > 0 && i < q.len() => q.swap(i - 1, i),
            "down" if i + 1 < q.len() => q.swap(i, i + 1),
            "remove" if i < q.len() => {
                q.remove(i);
            }
            _ => return None,
        }
        Some(self)
    }
}

/// What changed from one revision's content to another's, in words.
pub(super) fn changes(
    before: &PaperContent,
    after: &PaperContent,
    titles: &dyn Fn(&Pin) -> String,
) -> Vec<String> {
    let mut out = Vec::new();
    if before.title != after.title {
        out.push(format!("The title became “{}”.", after.title));
    }
    if before.writing_space != after.writing_space {
        out.push(format!(
            "The writing space became “{}”.",
            space_text(&after.writing_space)
        ));
    }
    if before.grade_guide != after.grade_guide {
        out.push(if after.grade_guide {
            "The grade guide was added.".to_owned()
        } else {
            "The grade guide was removed.".to_owned()
        });
    }
    for pin in &after.questions {
        if !before
            .questions
            .iter()
            .any(|p| p.question_id == pin.question_id)
        {
            out.push(format!("“{}” was added.", titles(pin)));
        }
    }
    for pin in &before.questions {
        if !after
            .questions
            .iter()
            .any(|p| p.question_id == pin.question_id)
        {
            out.push(format!("“{}” was removed.", titles(pin)));
        }
    }
    let kept = |list: &[Pin], other: &[Pin]| -> Vec<String> {
        list.iter()
            .filter(|p| other.iter().any(|o| o.question_id == p.question_id))
            .map(|p| p.question_id.clone())
            .collect()
    };
    if kept(&before.questions, &after.questions) != kept(&after.questions, &before.questions) {
        out.push("The questions were put in another order.".to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(id: &str) -> Pin {
        Pin {
            question_id: id.to_owned(),
            revision: 1,
            content_version: "c".into(),
            scheme_version: "s".into(),
        }
    }

    fn draft(ids: &[&str]) -> Draft {
        Draft {
            base: 1,
            content: PaperContent {
                title: "T".into(),
                writing_space: "smart".into(),
                grade_guide: false,
                questions: ids.iter().map(|id| pin(id)).collect(),
            },
        }
    }

    fn order(d: &Draft) -> Vec<&str> {
        d.content
            .questions
            .iter()
            .map(|p| p.question_id.as_str())
            .collect()
    }

    #[test]
    fn moves_and_removals_change_the_draft_and_nothing_else() {
        let d = draft(&["a", "b", "c"]);
        assert_eq!(
            order(&d.clone().apply("up:1").expect("up")),
            ["b", "a", "c"]
        );
        assert_eq!(
            order(&d.clone().apply("down:1").expect("down")),
            ["a", "c", "b"]
        );
        assert_eq!(
            order(&d.clone().apply("remove:0").expect("remove")),
            ["b", "c"]
        );
        for bad in ["up:0", "down:2", "remove:3", "up:x", "spin:1", "save", ""] {
            assert_eq!(d.clone().apply(bad), None, "{bad}");
        }
    }

    #[test]
    fn what_changed_is_said_in_words() {
        let before = draft(&["a", "b", "c"]).content;
        let mut after = draft(&["c", "a", "d"]).content;
        after.title = "Mock".into();
        after.grade_guide = true;
        let said = changes(&before, &after, &|p| p.question_id.to_uppercase());
        assert_eq!(
            said,
            [
                "The title became “Mock”.",
                "The grade guide was added.",
                "“D” was added.",
                "“B” was removed.",
                "The questions were put in another order.",
            ]
        );
        assert!(changes(&before, &before, &|p| p.question_id.clone()).is_empty());
    }
}
