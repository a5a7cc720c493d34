//! Rounding allowed by a criterion's notes: an `awrt` figure or `accept n s.f.` ([`awrt`]), and
//! the figures written after an accepted number that such a note lets stand.

use super::numbers::{signed_decimal, signed_decimal_places};
use serde::Serialize;

/// A figure stated by an `awrt` note: `awrt 2.35` → `2.35`, to 2 decimal places.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Figure {
    /// The figure as the note writes it, with an ASCII minus if negative (`2.35`, `-0.927`).
    pub text: String,
    /// Its decimal places.
    pub places: u32,
}

impl Figure {
    /// The figure's value.
    pub fn value(&self) -> f64 {
        self.text.parse().unwrap_or(f64::NAN)
    }

    /// Half a unit in the figure's last place: a value within this of the figure (the upper end
    /// excluded, as rounding half away from zero goes) rounds to it (`2.35` → 0.005).
    pub fn tolerance(&self) -> f64 {
        0.5 / 10f64.powi(i32::try_from(self.places).unwrap_or(i32::MAX))
    }

    /// Whether a written number rounds to this figure: a decimal (or integer) with at least the
    /// figure's decimal places, of the same sign, whose value rounds to it half away from zero.
    pub fn admits(&self, written: &str) -> bool {
        let (Some((fneg, fig)), Some((wneg, value, places))) =
            (signed_decimal(&self.text), signed_decimal_places(written))
        else {
            return false;
        };
        fneg == wneg
            && places >= self.places
            && fig.round_to(self.places).is_some()
            && value.round_to(self.places) == fig.round_to(self.places)
    }
}

/// The numeric tolerance allowed by a criterion's notes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Awrt {
    /// Figures stated by `awrt` notes (`awrt 2.35`, `awrt 53.13°`).
    pub figures: Vec<Figure>,
    /// Whether a note says `awrt` without a figure: every decimal in the accepted answers is then
    /// a rounded figure to its own decimal places.
    pub every_decimal: bool,
    /// The fewest significant figures an `accept N s.f.` (or `allow N sf`) note accepts.
    pub significant_figures: Option<u32>,
}

/// The numeric tolerance of an `awrt` note (`awrt 2.35` → 0.005 around 2.35: the value rounds to
/// 2.35), if any: see [`Awrt`]. Also reads `accept 3 s.f.` notes. `None` when no note allows
/// rounding.
pub fn awrt(notes: &[String]) -> Option<Awrt> {
    let mut out = Awrt::default();
    let mut any = false;
    for note in notes {
        let lower = note.to_lowercase();
        let chars: Vec<char> = lower.chars().collect();
        let mut i = 0;
        while i + 4 <= chars.len() {
            let word = chars[i..i + 4].iter().collect::<String>() == "awrt"
                && (i == 0 || !chars[i - 1].is_alphanumeric())
                && chars.get(i + 4).is_none_or(|c| !c.is_alphanumeric());
            if !word {
                i += 1;
                continue;
            }
            any = true;
            match figure_after(&chars[i + 4..]) {
                Some(figure) => {
                    if !out.figures.contains(&figure) {
                        out.figures.push(figure);
                    }
                }
                None => out.every_decimal = true,
            }
            i += 4;
        }
        if (lower.contains("accept") || lower.contains("allow"))
            && let Some(n) = significant_figures(&chars)
        {
            any = true;
            out.significant_figures = Some(out.significant_figures.map_or(n, |m| m.min(n)));
        }
    }
    any.then_some(out)
}

/// The number right after `awrt` (spaces, `$` and `=` skipped): `-0.927`, `53.13°` → `53.13`.
fn figure_after(rest: &[char]) -> Option<Figure> {
    let mut i = 0;
    while i < rest.len() && (rest[i].is_whitespace() || rest[i] == '$' || rest[i] == '=') {
        i += 1;
    }
    let mut text = String::new();
    if let Some(&c) = rest.get(i)
        && (c == '-' || c == '\u{2212}' || c == '+')
    {
        if c != '+' {
            text.push('-');
        }
        i += 1;
    }
    let start = text.len();
    let mut places = None;
    while let Some(&c) = rest.get(i) {
        if c.is_ascii_digit() {
            text.push(c);
            places = places.map(|p: u32| p + 1);
        } else if c == '.' && places.is_none() && rest.get(i + 1).is_some_and(char::is_ascii_digit)
        {
            if text.len() == start {
                text.push('0');
            }
            text.push('.');
            places = Some(0);
        } else {
            break;
        }
        i += 1;
    }
    if !text[start..].chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(Figure {
        text,
        places: places.unwrap_or(0),
    })
}

/// `3 s.f.`, `3sf`, `3 s.f`, `3 significant figures` in a note.
pub(super) fn significant_figures(chars: &[char]) -> Option<u32> {
    let mut best: Option<u32> = None;
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() || (i > 0 && chars[i - 1].is_alphanumeric()) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let n: Option<u32> = chars[start..i].iter().collect::<String>().parse().ok();
        let mut j = i;
        while j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        let rest: String = chars[j..].iter().take(12).collect();
        if (rest.starts_with("s.f") || rest.starts_with("sf") || rest.starts_with("significant"))
            && let Some(n) = n.filter(|&n| n > 0)
        {
            best = Some(best.map_or(n, |b| b.min(n)));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_awrt_notes() {
        let a = awrt(&strings(&["awrt 2.35"])).expect("awrt");
        assert_eq!(
            a.figures,
            vec![Figure {
                text: "2.35".into(),
                places: 2
            }]
        );
        assert!((a.figures[0].tolerance() - 0.005).abs() < 1e-12);
        assert!((a.figures[0].value() - 2.35).abs() < 1e-12);
        let cases: [(&str, &str, u32); 6] = [
            ("awrt 0.693", "0.693", 3),
            ("awrt −0.927", "-0.927", 3),
            ("awrt 53.13°", "53.13", 2),
            ("awrt 0.238 (0.2375...)", "0.238", 3),
            ("awrt 0.0228 for the probability", "0.0228", 4),
            ("awrt 126", "126", 0),
        ];
        for (note, text, places) in cases {
            let a = awrt(&strings(&[note])).expect(note);
            assert_eq!(a.figures.len(), 1, "{note}");
            assert_eq!(a.figures[0].text, text, "{note}");
            assert_eq!(a.figures[0].places, places, "{note}");
            assert!(!a.every_decimal);
        }
        let bare = awrt(&strings(&["awrt", "extra solutions lose this mark"])).expect("bare");
        assert!(bare.figures.is_empty() && bare.every_decimal);
        let sf = awrt(&strings(&["accept 3 s.f."])).expect("s.f.");
        assert_eq!(sf.significant_figures, Some(3));
        assert_eq!(awrt(&strings(&["cao", "oe", "drawn to scale"])), None);
        assert_eq!(awrt(&strings(&[])), None);
        assert_eq!(awrt(&strings(&["answers to 3 s.f. only"])), None);
    }

    #[test]
    fn figures_admit_values_that_round_to_them() {
        let f = Figure {
            text: "2.35".into(),
            places: 2,
        };
        for (written, ok) in [
            ("2.349", true),
            ("2.35", true),
            ("2.345", true),
            ("2.3549", true),
            ("2.355", false),
            ("2.3449", false),
            ("2.36", false),
            ("2.3", false),
            ("-2.35", false),
        ] {
            assert_eq!(f.admits(written), ok, "{written}");
        }
        let g = Figure {
            text: "-0.927".into(),
            places: 3,
        };
        assert!(g.admits("−0.9273"));
        assert!(!g.admits("0.9273"));
    }
}
