//! Files from outside, checked and drawn as the service's page processes check and draw them:
//! whatever the bytes, `check_pages` and `render_for_index` return (never panic, never run
//! past the fuzzer's memory and time limits, which stand for the page processes' budgets), and a
//! file that passes the check has every page drawable or refused with a reason.
#![no_main]

use examkit_scan::Format;
use libfuzzer_sys::fuzz_target;

/// A small raster budget, so that the fuzzer tries many files rather than drawing big pages.
const MAX_PIXELS: u64 = 2_000_000;
const DPI: u32 = 36;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, file)) = data.split_first() else {
        return;
    };
    let format = match choice % 4 {
        0 => Format::Pdf,
        1 => Format::Png,
        2 => Format::Jpeg,
        _ => Format::Webp,
    };
    let Ok(pages) = examkit_scan::check_pages(file, format, DPI, MAX_PIXELS, 4) else {
        return;
    };
    assert!(pages >= 1, "a file that passes has a page");
    for page in 1..=pages.min(4) {
        if let Ok(drawn) = examkit_scan::render_for_index(file, format, page, DPI, MAX_PIXELS) {
            let (w, h) = drawn.raster.dimensions();
            assert!(u64::from(w) * u64::from(h) <= MAX_PIXELS, "{w}x{h} over the budget");
        }
    }
});
