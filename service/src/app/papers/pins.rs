//! A question pinned at a revision as a form carries it (one hidden value, read back) and the
//! address of its diagrams: the bank's results and the paper's pages both show pinned questions
//! and send them on.

use maud::{Markup, html};

use crate::store::papers::Pin;

/// The hidden field carrying a pin in a form.
pub fn pin_fields(pin: &Pin) -> Markup {
    html! {
        input type="hidden" name="pin" value=(pin_value(pin));
    }
}

/// A pin as one form value: `questionId:revision:contentVersion:schemeVersion`.
pub fn pin_value(pin: &Pin) -> String {
    format!(
        "{}:{}:{}:{}",
        pin.question_id, pin.revision, pin.content_version, pin.scheme_version
    )
}

/// A pin read back from its form value; `None` for one that is not.
pub fn read_pin(value: &str) -> Option<Pin> {
    let mut fields = value.split(':');
    let (Some(question_id), Some(revision), Some(content_version), Some(scheme_version), None) = (
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
    ) else {
        return None;
    };
    Some(Pin {
        question_id: question_id.to_owned(),
        revision: revision.parse().ok()?,
        content_version: content_version.to_owned(),
        scheme_version: scheme_version.to_owned(),
    })
}

/// The address of a diagram of a bank revision.
pub fn diagram_href(pin: &Pin, asset: &uuid::Uuid) -> String {
    format!(
        "/app/bank/{}/{}/diagrams/{}",
        pin.question_id, pin.revision, asset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_survive_a_form() {
        let pin = Pin {
            question_id: "6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f".into(),
            revision: 3,
            content_version: "ab".repeat(32),
            scheme_version: "cd".repeat(32),
        };
        assert_eq!(read_pin(&pin_value(&pin)), Some(pin));
        for bad in ["", "a:b", "x:1:c:d:e", "x:one:c:d"] {
            assert_eq!(read_pin(bad), None, "{bad}");
        }
    }
}
