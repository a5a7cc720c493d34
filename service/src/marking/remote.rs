//! What examkit takes from a remote marker's HTTP answer (the external marker's and the vision
//! model provider's): the body, read up to a cap, and text from it fit to be saved with a failed
//! question, that is without the bearer token the call carried.

/// Reads a response's body, stopping once it is longer than `max` bytes: the result is then
/// `max + 1` bytes or more (up to one chunk over), which the caller refuses as too long. A body
/// larger than that is never held whole.
pub async fn read_limited(
    mut response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        body.extend_from_slice(&chunk);
        if body.len() > max {
            break;
        }
    }
    Ok(body)
}

/// The most characters of a remote message kept with a failed question.
pub const MAX_MESSAGE_CHARS: usize = 300;

/// Removes the token (and anything presented as a bearer credential) from a remote message and
/// shortens it to one line of at most [`MAX_MESSAGE_CHARS`] characters (and `…`). The token is
/// removed before the message is shortened, so no part of it survives at the cut.
pub fn scrubbed(message: &str, token: Option<&str>) -> String {
    let mut text = message.to_owned();
    if let Some(token) = token.filter(|t| !t.is_empty()) {
        text = text.replace(token, "[redacted]");
    }
    let mut words: Vec<String> = Vec::new();
    let mut redact_next = false;
    for word in text.split_whitespace() {
        if redact_next {
            words.push("[redacted]".into());
            redact_next = false;
        } else {
            redact_next = word.eq_ignore_ascii_case("bearer");
            words.push(word.to_owned());
        }
    }
    let text = words.join(" ");
    let mut short: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
    if text.chars().count() > MAX_MESSAGE_CHARS {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_survive_in_a_remote_message() {
        let token = "sk-test-123456";
        let message = format!(
            "Incorrect API key provided: {token}. Header was Bearer {token} and bearer abc"
        );
        let clean = scrubbed(&message, Some(token));
        assert!(!clean.contains(token), "{clean}");
        assert!(!clean.contains("abc"), "{clean}");
        assert!(clean.contains("Incorrect API key provided"));
        let long = "x ".repeat(400);
        assert!(scrubbed(&long, None).chars().count() <= MAX_MESSAGE_CHARS + 1);
        // Lines become one; a token at the cut is removed before the cut.
        let at_the_cut = format!("{}{token}", "é".repeat(MAX_MESSAGE_CHARS - 4));
        let clean = scrubbed(&at_the_cut, Some(token));
        assert!(!clean.contains("sk-t"), "{clean}");
        assert_eq!(scrubbed("one\ntwo\r\nthree", None), "one two three");
        assert_eq!(scrubbed("", Some("")), "");
    }
}
