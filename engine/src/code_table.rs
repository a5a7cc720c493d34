//! [`code_table!`](crate::code_table): the one way a table of stable codes is declared, here and
//! in the service (the engine's error and flag codes, the service's API error kinds, failure and
//! guard codes), and [`UnknownCode`], what reading a code that is not in a table gives.
//!
//! A table is an enum with one variant a code: its stable text, and a sentence that is both the
//! variant's documentation and its published meaning. The macro gives it `as_str`, `meaning`,
//! `ALL` (every value in table order), `from_code`, [`FromStr`](std::str::FromStr), `Display`,
//! and serde as the exact text (reading refuses any other). A table may add one more column, a
//! constant of any type read by a method it names (the HTTP status of an API error kind).
//!
//! The macro is pure text substitution: it writes no I/O and needs nothing of its user but the
//! engine crate, whose serde it names through `$crate`.

/// A text that is not one of a table's codes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCode {
    /// The table's name (`ErrorCode`, `FailureCode`…).
    pub table: &'static str,
    /// The text that was read.
    pub text: String,
}

impl std::fmt::Display for UnknownCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} is not a {} code", self.text, self.table)
    }
}

impl std::error::Error for UnknownCode {}

/// What the macro's expansion names, so its users need no serde of their own.
#[doc(hidden)]
pub mod __private {
    pub use serde;
}

/// Declares an enum of stable codes from one table.
///
/// ```
/// examkit_engine::code_table! {
///     /// Why a light is off.
///     pub enum Off {
///         Bulb = "bulb", "The bulb has gone.";
///         Switch = "switch", "Someone switched it off.";
///     }
/// }
/// assert_eq!(Off::Bulb.as_str(), "bulb");
/// assert_eq!("switch".parse::<Off>(), Ok(Off::Switch));
/// assert_eq!(Off::ALL.len(), 2);
/// assert_eq!(serde_json::to_string(&Off::Bulb).unwrap(), "\"bulb\"");
/// assert!(serde_json::from_str::<Off>("\"fuse\"").is_err());
///
/// // One more column, read by the method named in the table's head.
/// examkit_engine::code_table! {
///     /// How a request failed.
///     pub enum Failed {
///         /// The HTTP status.
///         fn status -> u16;
///         Missing = "missing", 404, "Nothing is there.";
///     }
/// }
/// assert_eq!(Failed::Missing.status(), 404);
/// ```
#[macro_export]
macro_rules! code_table {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(#[$ameta:meta])*
            fn $accessor:ident -> $ty:ty;
            $( $(#[$vmeta:meta])* $variant:ident = $code:literal, $value:expr, $meaning:literal; )+
        }
    ) => {
        $crate::code_table! {
            $(#[$meta])*
            $vis enum $name {
                $( $(#[$vmeta])* $variant = $code, $meaning; )+
            }
        }

        impl $name {
            $(#[$ameta])*
            pub const fn $accessor(self) -> $ty {
                match self {
                    $($name::$variant => $value,)+
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $code:literal, $meaning:literal; )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$vmeta])* #[doc = $meaning] $variant, )+
        }

        impl $name {
            /// Every value, in table order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stable code, exactly as it is sent and stored.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $code,)+
                }
            }

            /// What the code means, as published.
            pub const fn meaning(self) -> &'static str {
                match self {
                    $($name::$variant => $meaning,)+
                }
            }

            /// The value whose stable code is `code`, if any.
            pub fn from_code(code: &str) -> Option<Self> {
                match code {
                    $($code => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::UnknownCode;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                $name::from_code(text).ok_or_else(|| $crate::UnknownCode {
                    table: stringify!($name),
                    text: text.to_owned(),
                })
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S>(&self, serializer: S) -> Result<S::Ok, S::Error>
            where
                S: $crate::__private::serde::Serializer,
            {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
            where
                D: $crate::__private::serde::Deserializer<'de>,
            {
                struct Code;
                impl<'de> $crate::__private::serde::de::Visitor<'de> for Code {
                    type Value = $name;

                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " code"))
                    }

                    fn visit_str<E>(self, text: &str) -> Result<$name, E>
                    where
                        E: $crate::__private::serde::de::Error,
                    {
                        $name::from_code(text).ok_or_else(|| E::unknown_variant(text, &[$($code),+]))
                    }
                }
                deserializer.deserialize_str(Code)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::code_table! {
        /// A table for the tests.
        enum Sample {
            One = "one", "The first.";
            TwoWords = "two_words", "The second.";
        }
    }

    crate::code_table! {
        /// A table with a column.
        enum Weighed {
            /// Its weight.
            fn weight -> u16;
            Light = "light", 1, "Not much.";
            Heavy = "heavy", 9, "A lot.";
        }
    }

    #[test]
    fn every_code_round_trips_through_text_and_serde() {
        for value in Sample::ALL {
            let text = value.as_str();
            assert_eq!(Sample::from_code(text), Some(*value));
            assert_eq!(text.parse::<Sample>(), Ok(*value));
            assert_eq!(value.to_string(), text);
            let json = serde_json::to_string(value).expect("serialises");
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(
                serde_json::from_str::<Sample>(&json).expect("reads"),
                *value
            );
        }
        assert_eq!(
            serde_json::to_string(&Sample::ALL).expect("serialises"),
            r#"["one","two_words"]"#
        );
        assert_eq!(Sample::TwoWords.meaning(), "The second.");
    }

    #[test]
    fn unknown_codes_are_refused() {
        assert_eq!(
            "three".parse::<Sample>(),
            Err(crate::UnknownCode {
                table: "Sample",
                text: "three".into()
            })
        );
        assert_eq!(Sample::from_code("One"), None);
        assert!(serde_json::from_str::<Sample>("\"One\"").is_err());
        assert!(serde_json::from_str::<Sample>("1").is_err());
    }

    #[test]
    fn a_column_is_read_by_its_method() {
        assert_eq!(Weighed::Light.weight(), 1);
        assert_eq!(Weighed::Heavy.weight(), 9);
        assert_eq!(Weighed::ALL, &[Weighed::Light, Weighed::Heavy]);
        assert_eq!(Weighed::Heavy.as_str(), "heavy");
        assert_eq!(Weighed::Light.meaning(), "Not much.");
    }
}
