//! Fuzzes `validate(bytes, assets)`: it must never panic, and its outcome must be deterministic
//! and serialisable, with or without assets.
#![no_main]

use examkit_engine::{Asset, AssetKind, validate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte chooses whether the assets used by the seed corpus are known.
    let (with_assets, document) = match data.split_first() {
        Some((flag, rest)) => (flag & 1 == 1, rest),
        None => (false, data),
    };
    let assets = [
        asset("3f0c9a52-8a6e-4c1b-9d2f-0b7e5a1c4d11", AssetKind::Work, 6),
        asset("8b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e22", AssetKind::Scheme, 3),
    ];
    let outcome = validate(document, with_assets.then_some(&assets[..]));
    let json = outcome.to_json();
    assert_eq!(json, validate(document, with_assets.then_some(&assets[..])).to_json());
    assert!(outcome.is_valid() || !outcome.errors().is_empty());
});

fn asset(id: &str, kind: AssetKind, page_count: u32) -> Asset {
    Asset { id: id.parse().unwrap_or_default(), kind, page_count }
}
