//! The checked query of a bank search, as `GET /v1/questions` and the app's bank page send it:
//! [`parse_search`] reads every parameter, reports every problem at once, and hands back
//! [`SearchParams`] for [`super::search`].

use crate::fields::{FieldError, integer, uuid};
use crate::store::search::{SearchFilters, query_words};

/// The longest `q`, in characters.
pub const MAX_Q_CHARS: usize = 160;
/// The longest id filter (`module`, `board`, `tag`, `topic`, `subtopic`), in characters.
pub const MAX_ID_CHARS: usize = 120;
/// The most `excludeIds`.
pub const MAX_EXCLUDE_IDS: usize = 1000;
/// The default page size.
pub const DEFAULT_LIMIT: i64 = 30;
/// The largest page size.
pub const MAX_LIMIT: i64 = 100;

/// Validated `GET /v1/questions` parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchParams {
    /// The normalised filters.
    pub filters: SearchFilters,
    /// The cursor id, canonical.
    pub cursor: Option<String>,
    /// Page size.
    pub limit: i64,
    /// A random sample instead of a page.
    pub random: bool,
}

const LEVELS: &[&str] = &[
    "as-level",
    "a-level",
    "international-as-level",
    "international-a-level",
];
const SUBJECTS: &[&str] = &["maths", "further-maths"];
const FREQUENCIES: &[&str] = &["frequent", "occasional", "rare"];
const SINGLE: &[&str] = &[
    "q",
    "module",
    "level",
    "subject",
    "board",
    "year",
    "tag",
    "topic",
    "subtopic",
    "difficulty",
    "minMarks",
    "maxMarks",
    "random",
    "favouritesOnly",
    "frequency",
    "cursor",
    "limit",
];

fn text(errors: &mut Vec<FieldError>, name: &str, value: &str, max: usize) -> Option<String> {
    let chars = value.chars().count();
    if chars == 0 {
        errors.push(FieldError::new(
            name,
            "min_length",
            format!("{name} must be 1 to {max} characters, not empty"),
        ));
        None
    } else if chars > max {
        errors.push(FieldError::new(
            name,
            "max_length",
            format!("{name} must be 1 to {max} characters, not {chars}"),
        ));
        None
    } else {
        Some(value.to_owned())
    }
}

fn one_of(
    errors: &mut Vec<FieldError>,
    name: &str,
    value: &str,
    allowed: &[&str],
) -> Option<String> {
    if allowed.contains(&value) {
        Some(value.to_owned())
    } else {
        errors.push(FieldError::new(
            name,
            "enum",
            format!(
                "{name} must be one of {}, not {value:?}",
                allowed.join(", ")
            ),
        ));
        None
    }
}

fn boolean(errors: &mut Vec<FieldError>, name: &str, value: &str) -> Option<bool> {
    match value {
        "true" => Some(true),
        "false" => Some(false),
        _ => {
            errors.push(FieldError::new(
                name,
                "type",
                format!("{name} must be true or false, not {value:?}"),
            ));
            None
        }
    }
}

/// Parses and checks the query string of `GET /v1/questions`, reporting every problem.
pub fn parse_search(query: &str) -> Result<SearchParams, Vec<FieldError>> {
    let mut parse = Parse::new();
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        parse.pair(name.as_ref(), &value);
    }
    parse.finish()
}

/// A search query as it is read, parameter by parameter, with the problems found so far.
struct Parse {
    errors: Vec<FieldError>,
    seen: Vec<String>,
    filters: SearchFilters,
    cursor: Option<String>,
    limit: i64,
    random: bool,
    exclude: Vec<String>,
    exclude_count: usize,
}

impl Parse {
    fn new() -> Self {
        Parse {
            errors: Vec::new(),
            seen: Vec::new(),
            filters: SearchFilters::default(),
            cursor: None,
            limit: DEFAULT_LIMIT,
            random: false,
            exclude: Vec::new(),
            exclude_count: 0,
        }
    }

    /// Reads one `name=value` pair: an id to exclude, or one of the parameters given once.
    fn pair(&mut self, name: &str, value: &str) {
        if name == "excludeIds" {
            self.exclude_count += 1;
            if let Some(id) = uuid(&mut self.errors, "excludeIds", value) {
                self.exclude.push(id);
            }
        } else if self.admitted(name) {
            self.single(name, value);
        }
    }

    /// Whether `name` is a known parameter not seen before; reports it when it is not.
    fn admitted(&mut self, name: &str) -> bool {
        if !SINGLE.contains(&name) {
            self.errors.push(FieldError::new(
                name,
                "unknown_parameter",
                format!(
                    "unknown parameter {name:?}; the parameters are {} and excludeIds",
                    SINGLE.join(", ")
                ),
            ));
            return false;
        }
        if self.seen.iter().any(|s| s == name) {
            if !self
                .errors
                .iter()
                .any(|e| e.path == name && e.code == "repeated_parameter")
            {
                self.errors.push(FieldError::new(
                    name,
                    "repeated_parameter",
                    format!("{name} may be given once"),
                ));
            }
            return false;
        }
        self.seen.push(name.to_owned());
        true
    }

    /// Reads the value of a parameter given once.
    fn single(&mut self, name: &str, value: &str) {
        let e = &mut self.errors;
        let filters = &mut self.filters;
        match name {
            "q" => {
                // Words the index leaves out are dropped; a q of only such words (the, above,
                // a) searches as if it were absent.
                if let Some(q) = text(e, name, value, MAX_Q_CHARS) {
                    filters.words = query_words(&q);
                }
            }
            "module" => filters.module = text(e, name, value, MAX_ID_CHARS),
            "board" => filters.board = text(e, name, value, MAX_ID_CHARS),
            "tag" => filters.tag = text(e, name, value, MAX_ID_CHARS),
            "topic" => filters.topic = text(e, name, value, MAX_ID_CHARS),
            "subtopic" => filters.subtopic = text(e, name, value, MAX_ID_CHARS),
            "level" => filters.level = one_of(e, name, value, LEVELS),
            "subject" => filters.subject = one_of(e, name, value, SUBJECTS),
            "frequency" => filters.frequency = one_of(e, name, value, FREQUENCIES),
            "year" => filters.year = integer(e, name, value, 1900, 2100),
            "difficulty" => filters.difficulty = integer(e, name, value, 1, 5),
            "minMarks" => filters.min_marks = integer(e, name, value, 0, 100),
            "maxMarks" => filters.max_marks = integer(e, name, value, 0, 100),
            "limit" => {
                if let Some(n) = integer(e, name, value, 1, MAX_LIMIT) {
                    self.limit = n;
                }
            }
            "random" => self.random = boolean(e, name, value).unwrap_or(false),
            "favouritesOnly" => {
                filters.favourites_only = boolean(e, name, value).unwrap_or(false);
            }
            "cursor" => self.cursor = uuid(e, name, value),
            _ => {}
        }
    }

    /// Checks the parameters against each other, then hands back the search or every problem.
    fn finish(mut self) -> Result<SearchParams, Vec<FieldError>> {
        if self.exclude_count > MAX_EXCLUDE_IDS {
            self.errors.push(FieldError::new(
                "excludeIds",
                "max_items",
                format!(
                    "excludeIds may hold at most {MAX_EXCLUDE_IDS} ids, not {}",
                    self.exclude_count
                ),
            ));
        }
        if let (Some(min), Some(max)) = (self.filters.min_marks, self.filters.max_marks)
            && min > max
        {
            self.errors.push(FieldError::new(
                "minMarks",
                "range",
                format!("minMarks ({min}) is greater than maxMarks ({max})"),
            ));
        }
        if self.random && self.seen.iter().any(|s| s == "cursor") {
            self.errors.push(FieldError::new(
                "cursor",
                "conflict",
                "a random sample has no cursor: cursor cannot be combined with random=true",
            ));
        }
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        self.exclude.sort_unstable();
        self.exclude.dedup();
        self.filters.exclude_ids = self.exclude;
        Ok(SearchParams {
            filters: self.filters,
            cursor: self.cursor,
            limit: self.limit,
            random: self.random,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(query: &str) -> Vec<(String, &'static str)> {
        parse_search(query)
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| (e.path, e.code))
            .collect()
    }

    #[test]
    fn defaults() {
        let params = parse_search("").expect("valid");
        assert_eq!(params.limit, 30);
        assert!(!params.random);
        assert_eq!(params.filters, SearchFilters::default());
    }

    #[test]
    fn every_problem_is_reported() {
        assert_eq!(
            codes("limit=0&year=1899&level=gcse&random=yes&colour=red&q=&limit=5"),
            [
                ("limit".to_owned(), "minimum"),
                ("year".to_owned(), "minimum"),
                ("level".to_owned(), "enum"),
                ("random".to_owned(), "type"),
                ("colour".to_owned(), "unknown_parameter"),
                ("q".to_owned(), "min_length"),
                ("limit".to_owned(), "repeated_parameter"),
            ]
        );
        assert_eq!(
            codes("minMarks=9&maxMarks=3"),
            [("minMarks".to_owned(), "range")]
        );
        assert_eq!(
            codes("random=true&cursor=6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f"),
            [("cursor".to_owned(), "conflict")]
        );
        assert_eq!(codes("year=2019.0"), [("year".to_owned(), "type")]);
        assert_eq!(codes("year=+2019"), [("year".to_owned(), "type")]);
        assert_eq!(
            codes("difficulty=99999999999999999999999"),
            [("difficulty".to_owned(), "maximum")]
        );
    }

    #[test]
    fn words_the_index_leaves_out_are_dropped() {
        for q in ["q=the+of", "q=above", "q=a", "q=!!!"] {
            let params = parse_search(q).expect("a valid q");
            assert_eq!(params.filters, SearchFilters::default(), "{q}");
        }
        let params = parse_search("q=above+integration&subject=maths").expect("valid");
        assert_eq!(params.filters.words, ["integration"]);
        assert_eq!(params.filters.subject.as_deref(), Some("maths"));
    }

    #[test]
    fn exclude_ids_are_normalised() {
        let params = parse_search(
            "excludeIds=6F1C2B0E-1D2A-4C3B-9E8F-0A1B2C3D4E5F&excludeIds=6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f",
        )
        .expect("valid");
        assert_eq!(
            params.filters.exclude_ids,
            ["6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f"]
        );
        assert_eq!(
            codes("excludeIds=nope"),
            [("excludeIds".to_owned(), "format")]
        );
    }
}
