//! The digests pins and the importer rely on: what changes them and what does not.

use std::collections::BTreeMap;

use examkit_bank::digest::{content_version, digests, revision_digest, scheme_version, sha256_hex};
use examkit_bank::{Block, Status, sample};

#[test]
fn digests_follow_their_definition() {
    let bank = sample::load().expect("sample loads");
    let assets: BTreeMap<_, _> = bank
        .assets
        .iter()
        .map(|(id, a)| (*id, a.bytes.clone()))
        .collect();
    let (_, _, question) = bank
        .questions()
        .find(|(_, _, q)| !q.revisions[0].assets.is_empty())
        .expect("a question with a diagram");
    let revision = &question.revisions[0];
    let all = digests(revision, &assets).expect("digests");
    assert_eq!(
        all.content_version,
        content_version(revision, &assets).expect("content")
    );
    assert_eq!(all.scheme_version, scheme_version(&revision.scheme));
    assert_eq!(
        all.revision_digest,
        revision_digest(revision, &assets).expect("digest")
    );
    for d in [
        &all.content_version,
        &all.scheme_version,
        &all.revision_digest,
    ] {
        assert_eq!(d.len(), 64);
        assert!(
            d.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
    }
    // The scheme version is the hash of the canonical scheme, nothing else.
    assert_eq!(
        all.scheme_version,
        sha256_hex(examkit_bank::digest::canonical_json(&revision.scheme).as_bytes())
    );

    // Status is not part of any digest; the asset's path is not either, only its bytes.
    let mut moved = revision.clone();
    moved.status = Status::Withdrawn;
    moved.assets[0].file = "elsewhere/renamed.svg".to_owned();
    assert_eq!(digests(&moved, &assets).expect("digests"), all);

    // Other bytes for the diagram change the content version and the digest, not the scheme.
    let mut other_bytes = assets.clone();
    other_bytes.insert(revision.assets[0].id, b"<svg/>".to_vec());
    let changed = digests(revision, &other_bytes).expect("digests");
    assert_ne!(changed.content_version, all.content_version);
    assert_ne!(changed.revision_digest, all.revision_digest);
    assert_eq!(changed.scheme_version, all.scheme_version);

    // A scheme edit changes the scheme version and the digest, not the content version.
    let mut edited = revision.clone();
    edited.scheme.criteria[0].notes.push("oe".to_owned());
    let changed = digests(&edited, &assets).expect("digests");
    assert_eq!(changed.content_version, all.content_version);
    assert_ne!(changed.scheme_version, all.scheme_version);
    assert_ne!(changed.revision_digest, all.revision_digest);

    // A title edit changes only the digest.
    let mut retitled = revision.clone();
    retitled.title.push('!');
    let changed = digests(&retitled, &assets).expect("digests");
    assert_eq!(changed.content_version, all.content_version);
    assert_eq!(changed.scheme_version, all.scheme_version);
    assert_ne!(changed.revision_digest, all.revision_digest);

    // A content edit changes the content version.
    let mut reworded = revision.clone();
    if let Some(Block::Text { text }) = reworded.content.stem.first_mut() {
        text.push(' ');
    }
    assert_ne!(
        digests(&reworded, &assets)
            .expect("digests")
            .content_version,
        all.content_version
    );

    // Missing asset bytes are an error, not a silent digest.
    assert!(digests(revision, &BTreeMap::<uuid::Uuid, Vec<u8>>::new()).is_err());
}
