//! How calibration and qualification name a marker: the kind and model a configuration names
//! ([`marker_name`]), and the phrase people read ([`described`]). A leaf, so that the marking jobs
//! can name markers as calibration saves them without depending on calibration itself.

use crate::marking::MarkerChoice;

/// The marker a configuration names, for the report: `(marker, model)`.
pub fn marker_name(choice: &MarkerChoice) -> (&'static str, Option<String>) {
    match choice {
        MarkerChoice::BuiltIn => ("builtin", None),
        MarkerChoice::External { .. } => ("external", None),
        MarkerChoice::OpenAi(config) => ("openai", Some(config.marker_model())),
    }
}

/// `the openai marker (model m)`, `the builtin marker`.
pub fn described(marker: &str, model: Option<&str>) -> String {
    match model {
        Some(model) => format!("{marker} marker (model {model})"),
        None => format!("{marker} marker"),
    }
}
