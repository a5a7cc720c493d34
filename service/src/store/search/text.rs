//! The text of a search: the searchable words of `q` (English stop words dropped, as
//! PostgreSQL's index leaves them out), the FTS5 and `to_tsquery` texts that match them, and the
//! PostgreSQL text vectors each relevance tier reads. Pure functions over words.

use super::Tier;

/// English stop words (PostgreSQL's `english` list), dropped from `q` on both backends.
const STOP_WORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "should",
    "now",
];

/// The searchable words of a text query: runs of letters and digits, lowercased, stop words
/// dropped, repeats removed, in order of first appearance. Empty when no word is left: the search
/// then has no text condition.
pub fn query_words(q: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in q.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let word = word.to_lowercase();
        if STOP_WORDS.contains(&word.as_str()) || words.contains(&word) {
            continue;
        }
        words.push(word);
    }
    words
}

/// The text vectors of a PostgreSQL search index row, each with its words counted in
/// `search_vocabulary`.
pub(super) const VOCABULARY_FIELDS: [&str; 3] = ["title_words", "lead_words", "document"];

/// An FTS5 query: every word, quoted, as a prefix, all required, in any column.
pub(super) fn fts5_match(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("\"{}\"*", w.replace('"', "")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The FTS5 query of one relevance tier's matches.
pub(super) fn fts5_query(words: &[String], tier: Tier) -> String {
    let all = fts5_match(words);
    match tier {
        Tier::Title => format!("{{title}} : ({all})"),
        Tier::Summary => format!("{{title summary}} : ({all}) NOT {{title}} : ({all})"),
        Tier::Metadata => format!("({all}) NOT {{title summary}} : ({all})"),
    }
}

/// A PostgreSQL `to_tsquery` text: every word as a prefix, all required.
pub(super) fn tsquery_match(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            format!(
                "{}:*",
                w.replace(['\'', '\\', ':', '&', '|', '!', '(', ')', '<', '>'], "")
            )
        })
        .collect::<Vec<_>>()
        .join(" & ")
}

/// The PostgreSQL condition of one relevance tier's matches, for `search_questions s`: the
/// column whose GIN index finds the tier's candidates (every word in it), and the column whose
/// matches belong to the tiers before (none for the first).
pub(super) fn tier_columns(tier: Tier) -> (&'static str, Option<&'static str>) {
    match tier {
        Tier::Title => ("s.title_words", None),
        Tier::Summary => ("s.lead_words", Some("s.title_words")),
        Tier::Metadata => ("s.document", Some("s.lead_words")),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever `q` holds, its words are distinct, never empty, never stop words, and each
        /// becomes exactly one required prefix term of both query texts.
        #[test]
        fn every_query_word_is_one_prefix_term(
            parts in prop::collection::vec(
                prop_oneof![
                    prop::sample::select(STOP_WORDS).prop_map(str::to_uppercase),
                    "\\PC{0,12}",
                ],
                0..8,
            ),
        ) {
            let words = query_words(&parts.join(" "));
            for (i, word) in words.iter().enumerate() {
                prop_assert!(!word.is_empty());
                prop_assert!(!STOP_WORDS.contains(&word.as_str()), "{}", word);
                prop_assert!(!words[..i].contains(word), "{}", word);
            }
            if !words.is_empty() {
                let fts5 = fts5_match(&words);
                let terms: Vec<&str> = fts5.split(' ').collect();
                prop_assert_eq!(terms.len(), words.len());
                for term in terms {
                    prop_assert!(term.len() > 3, "{}", term);
                    prop_assert!(term.starts_with('"') && term.ends_with("\"*"), "{}", term);
                }
                let tsquery = tsquery_match(&words);
                let terms: Vec<&str> = tsquery.split(" & ").collect();
                prop_assert_eq!(terms.len(), words.len());
                for term in terms {
                    prop_assert!(term.len() > 2 && term.ends_with(":*"), "{}", term);
                }
            }
        }
    }

    #[test]
    fn query_words_drop_stop_words_and_punctuation() {
        assert_eq!(
            query_words("The Area under a CURVE, area-under!"),
            ["area", "curve"]
        );
        assert!(query_words("the of and").is_empty());
        assert!(query_words("!!! ---").is_empty());
        assert_eq!(query_words("Mécanique 2019"), ["mécanique", "2019"]);
    }

    #[test]
    fn text_queries_are_prefix_conjunctions() {
        let words = vec!["area".to_owned(), "curve".to_owned()];
        assert_eq!(fts5_match(&words), "\"area\"* \"curve\"*");
        assert_eq!(tsquery_match(&words), "area:* & curve:*");
    }

    #[test]
    fn tiers_split_the_matches_by_where_every_word_is() {
        let words = vec!["area".to_owned(), "curve".to_owned()];
        let q = "\"area\"* \"curve\"*";
        assert_eq!(
            fts5_query(&words, Tier::Title),
            format!("{{title}} : ({q})")
        );
        assert_eq!(
            fts5_query(&words, Tier::Summary),
            format!("{{title summary}} : ({q}) NOT {{title}} : ({q})")
        );
        assert_eq!(
            fts5_query(&words, Tier::Metadata),
            format!("({q}) NOT {{title summary}} : ({q})")
        );
        assert_eq!(tier_columns(Tier::Title), ("s.title_words", None));
        assert_eq!(
            tier_columns(Tier::Summary),
            ("s.lead_words", Some("s.title_words"))
        );
        assert_eq!(
            tier_columns(Tier::Metadata),
            ("s.document", Some("s.lead_words"))
        );
        // A quote cannot end an FTS5 string early, and tsquery operators cannot join a word
        // (`query_words` passes only letters and digits; these guard the query text anyway).
        let odd = vec!["a\"b".to_owned(), "c&!d:|(e)".to_owned()];
        assert_eq!(fts5_match(&odd), "\"ab\"* \"c&!d:|(e)\"*");
        assert_eq!(tsquery_match(&odd[1..]), "cde:*");
    }
}
