//! The app's requests count against the same rate limits as the API's: each signed-in browser
//! session as a key of its own, and its account's limits shared with the account's keys. A
//! request is weighed by what it costs: a page or an image is one request, a form sent is a
//! write, a markbook file two writes, and a class's returned scripts five. Over a limit, the
//! answer is `429` with `Retry-After` and a page saying when to try again.

use super::{AppError, Signed};
use crate::error::ApiError;
use crate::store::now_ms;

/// What one request of the app weighs: (admissions, counted as writes).
pub fn weight(segments: &[&str], post: bool) -> (u32, bool) {
    match segments {
        ["class-sets", _, "returned.pdf" | "returned.zip"] => (5, true),
        [
            "class-sets",
            _,
            "markbook.csv" | "markbook.xlsx" | "criteria.csv",
        ] => (2, true),
        _ if post => (1, true),
        _ => (1, false),
    }
}

/// Counts one request of `signed` weighing `weight` against the limits, or refuses it (`429`).
pub async fn admit(signed: &Signed, (times, write): (u32, bool)) -> Result<(), AppError> {
    let state = &signed.visit.state;
    let key = super::session::key_name(signed);
    for _ in 0..times {
        let admission = state
            .store
            .admit(&key, &signed.user.id, write, now_ms(), &state.limits)
            .await?;
        if !admission.admitted {
            return Err(AppError::Api(ApiError::RateLimited {
                retry_after: admission.retry_after,
            }));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::weight;

    #[test]
    fn downloads_weigh_more_than_pages() {
        assert_eq!(weight(&["sessions"], false), (1, false));
        assert_eq!(weight(&["pages", "a", "1"], false), (1, false));
        assert_eq!(weight(&["class-sets", "x", "decide"], true), (1, true));
        assert_eq!(
            weight(&["class-sets", "x", "markbook.csv"], false),
            (2, true)
        );
        assert_eq!(
            weight(&["class-sets", "x", "returned.zip"], false),
            (5, true)
        );
        assert_eq!(weight(&["class-sets", "x", "results"], false), (1, false));
    }
}
