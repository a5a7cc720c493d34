//! Asset ids and page ids: `<canonical lowercase asset uuid>:p<n>`.

use uuid::Uuid;

use crate::limits::MAX_PAGE_NUMBER;

/// A page of an asset, as cited by `sourcePageIds` and evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PageId {
    /// The asset.
    pub asset: Uuid,
    /// The one-based page number.
    pub page: u32,
}

/// Parses a canonical lowercase hyphenated UUID (`0f8fad5b-d9cb-469f-a165-70867728950e`).
pub(crate) fn canonical_uuid(text: &str) -> Option<Uuid> {
    let bytes = text.as_bytes();
    if bytes.len() != 36 {
        return None;
    }
    let canonical = bytes.iter().enumerate().all(|(i, &b)| match i {
        8 | 13 | 18 | 23 => b == b'-',
        _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
    });
    if !canonical {
        return None;
    }
    Uuid::try_parse(text).ok()
}

/// Parses a page number as written in a page id: digits, no leading zero, 1 to 10,000.
fn page_number(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 5 || text.starts_with('0') {
        return None;
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number: u32 = text.parse().ok()?;
    (1..=MAX_PAGE_NUMBER).contains(&number).then_some(number)
}

/// Parses `<asset uuid>:p<n>`.
pub(crate) fn parse_page_id(text: &str) -> Option<PageId> {
    let (asset, page) = text.split_at_checked(36)?;
    let asset = canonical_uuid(asset)?;
    let page = page_number(page.strip_prefix(":p")?)?;
    Some(PageId { asset, page })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

    #[test]
    fn accepts_canonical_page_ids() {
        let page = parse_page_id(&format!("{ID}:p1")).expect("valid");
        assert_eq!(page.page, 1);
        assert_eq!(page.asset.to_string(), ID);
        assert_eq!(
            parse_page_id(&format!("{ID}:p10000")).map(|p| p.page),
            Some(10_000)
        );
    }

    #[test]
    fn rejects_malformed_page_ids() {
        for bad in [
            format!("{ID}:p0"),
            format!("{ID}:p01"),
            format!("{ID}:p10001"),
            format!("{ID}:p"),
            format!("{ID}:1"),
            format!("{ID}p1"),
            format!("{ID}:p1 "),
            format!("{ID}:p-1"),
            format!("{ID}:p+1"),
            format!("{}:p1", ID.to_uppercase()),
            format!("{{{ID}}}:p1"),
            ID.replace('-', "") + ":p1",
            "é".repeat(18) + ":p1",
            String::new(),
        ] {
            assert_eq!(parse_page_id(&bad), None, "{bad}");
        }
    }

    #[test]
    fn canonical_uuids_only() {
        assert!(canonical_uuid(ID).is_some());
        assert!(canonical_uuid(&ID.to_uppercase()).is_none());
        assert!(canonical_uuid(&format!("urn:uuid:{ID}")).is_none());
        assert!(canonical_uuid("0f8fad5b-d9cb-469f-a165-70867728950g").is_none());
    }
}
