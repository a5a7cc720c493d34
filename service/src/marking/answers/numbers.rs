//! Exact rational numbers as written: decimals and fractions in lowest terms, signs, decimal
//! places and significant figures.

use super::normalise::{is_number_text, normalise};

/// A non-negative rational number in lowest terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ratio {
    pub(super) num: i128,
    pub(super) den: i128,
}

pub(super) fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

impl Ratio {
    pub(super) fn new(num: i128, den: i128) -> Option<Ratio> {
        if den <= 0 || num < 0 {
            return None;
        }
        let g = gcd(num, den).max(1);
        Some(Ratio {
            num: num / g,
            den: den / g,
        })
    }

    /// `12.340` → 1234/100, with its decimal places (3); `.5` → 1/2 with 1 place.
    pub(super) fn decimal(text: &str) -> Option<(Ratio, u32)> {
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        let digits = format!("{int}{frac}");
        if digits.is_empty() || digits.len() > 30 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let places = u32::try_from(frac.len()).ok()?;
        let num: i128 = digits.parse().ok()?;
        let den = 10i128.checked_pow(places)?;
        Some((Ratio::new(num, den)?, places))
    }

    /// The value times 10^places, rounded half away from zero (the value is non-negative).
    pub(super) fn round_to(self, places: u32) -> Option<i128> {
        let scaled = self.num.checked_mul(10i128.checked_pow(places)?)?;
        let doubled = scaled.checked_mul(2)?.checked_add(self.den)?;
        Some(doubled / self.den.checked_mul(2)?)
    }
}

/// A decimal with an optional leading minus: (negative, magnitude).
pub(super) fn signed_decimal(text: &str) -> Option<(bool, Ratio)> {
    signed_decimal_places(text).map(|(neg, r, _)| (neg, r))
}

/// A decimal with an optional leading minus (any spelling): (negative, magnitude, places).
pub(super) fn signed_decimal_places(text: &str) -> Option<(bool, Ratio, u32)> {
    let canon = normalise(text);
    let (neg, digits) = match canon.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, canon.as_str()),
    };
    if !is_number_text(digits) {
        return None;
    }
    let (r, places) = Ratio::decimal(digits)?;
    Some((neg, r, places))
}

/// Significant figures shown by a written number: leading zeros never count, trailing zeros of
/// an integer do not either (`130` → 2, `0.0300` → 3).
pub(super) fn significant(text: &str) -> u32 {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_start_matches('0');
    let digits = if text.contains('.') {
        digits
    } else {
        digits.trim_end_matches('0')
    };
    u32::try_from(digits.len()).unwrap_or(u32::MAX)
}
