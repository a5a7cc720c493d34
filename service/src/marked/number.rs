//! Numbers as they are stored. The contract lets a whole number be written `2` or `2.0`, and a
//! fraction of a page in as many digits as its writer chose; a number read here keeps the form it
//! was stored in, so that a question written back reads exactly as it was, beside the value it
//! stands for.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Number;

/// A stored number and the value it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored<T> {
    stored: Number,
    value: T,
}

impl<T: Copy> Stored<T> {
    /// The value.
    pub fn value(&self) -> T {
        self.value
    }

    /// The number as stored.
    pub fn stored(&self) -> &Number {
        &self.stored
    }
}

impl<T> Serialize for Stored<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.stored.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Stored<f64> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let stored = Number::deserialize(deserializer)?;
        let value = stored
            .as_f64()
            .ok_or_else(|| serde::de::Error::custom(format!("{stored} is not a number")))?;
        Ok(Stored { stored, value })
    }
}

impl<'de> Deserialize<'de> for Stored<u32> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let stored = Number::deserialize(deserializer)?;
        let value = whole(&stored).ok_or_else(|| {
            serde::de::Error::custom(format!("{stored} is not a whole number from 0 to 2^32 - 1"))
        })?;
        Ok(Stored { stored, value })
    }
}

/// A whole number that fits a `u32`, written either as an integer or as a float with no fraction
/// (the contract's integers).
fn whole(number: &Number) -> Option<u32> {
    if let Some(n) = number.as_u64() {
        return u32::try_from(n).ok();
    }
    if number.is_i64() {
        return None;
    }
    let f = number.as_f64()?;
    if f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&f) {
        // In range and whole: the conversion is exact.
        return Some(f as u32);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_keeps_the_form_it_was_stored_in() {
        for text in ["2", "2.0", "0.1", "1e0", "0.30000000000000004", "-0.0"] {
            let n: Stored<f64> = serde_json::from_str(text).expect("a number");
            let value: serde_json::Value = serde_json::from_str(text).expect("a number");
            assert_eq!(
                serde_json::to_string(&n).expect("written"),
                value.to_string(),
                "{text}"
            );
        }
        let page: Stored<u32> = serde_json::from_str("3.0").expect("a whole number");
        assert_eq!(page.value(), 3);
        assert_eq!(serde_json::to_string(&page).expect("written"), "3.0");
    }

    #[test]
    fn a_whole_number_is_whole_and_in_range() {
        for text in ["1.5", "-1", "4294967296", "\"1\"", "null"] {
            assert!(serde_json::from_str::<Stored<u32>>(text).is_err(), "{text}");
        }
    }
}
