//! Maths in the app's pages: text with typst maths between dollars (`Find $z^2$ where
//! $abs(z) = 1$`) shown with each piece of maths drawn as the papers draw it, as inline SVG
//! ([`examkit_pdf::Renderer::math_svg`]: checked maths only, no styles, scripts or links, ids
//! unique to each fragment).
//!
//! Typesetting is CPU work, so a page handler first calls [`Maths::prepare`] with every text it
//! will show: the fragments not yet drawn are typeset on tokio's blocking pool. Drawing the page
//! with [`Maths::rich`] then only reads the cache. The cache is bounded ([`MAX_ENTRIES`]
//! fragments, [`MAX_BYTES`] of SVG; the oldest go first) and keyed by the SHA-256 of each
//! fragment; a fragment that cannot be drawn is remembered too, and not tried again.
//!
//! Each drawing is named for screen readers by the words of its maths ([`spoken`]:
//! `frac(1, 2)` is "1 over 2"), not by its typst source.

mod spoken;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use examkit_pdf::math::{Piece, pieces};
use examkit_pdf::{RenderError, Renderer};
use maud::{Markup, PreEscaped, html};
use sha2::{Digest, Sha256};

use spoken::spoken;

/// The most fragments the cache keeps.
pub const MAX_ENTRIES: usize = 2048;

/// The most SVG the cache keeps, in bytes (a fragment draws a few kilobytes; the largest
/// allowed draws [`examkit_pdf::math::MAX_SVG_BYTES`]).
pub const MAX_BYTES: usize = 32 << 20;

/// The SHA-256 of a fragment, as written between its dollars.
type Key = [u8; 32];

/// A fragment's drawing, or why it has none.
type Drawn = Result<Arc<str>, String>;

/// The maths of the app's pages: a typesetter and the fragments it has drawn. Cheap to clone
/// (clones share the cache).
#[derive(Clone)]
pub struct Maths {
    inner: Arc<Inner>,
}

struct Inner {
    renderer: Arc<Renderer>,
    cache: Mutex<Cache>,
    /// Fragments typeset since the start.
    rendered: AtomicU64,
}

/// The drawn fragments, oldest first in `order`.
#[derive(Default)]
struct Cache {
    entries: HashMap<Key, Drawn>,
    order: VecDeque<Key>,
    /// The bytes of the SVG held.
    bytes: usize,
}

impl Cache {
    fn insert(&mut self, key: Key, drawn: Drawn) {
        let size = drawn.as_ref().map_or(0, |svg| svg.len());
        if let Some(old) = self.entries.insert(key, drawn) {
            // Drawn again by a request that prepared the same fragment at the same time.
            self.bytes -= old.as_ref().map_or(0, |svg| svg.len());
        } else {
            self.order.push_back(key);
        }
        self.bytes += size;
        while self.order.len() > MAX_ENTRIES || self.bytes > MAX_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(Ok(svg)) = self.entries.remove(&oldest) {
                self.bytes -= svg.len();
            }
        }
    }
}

impl fmt::Debug for Maths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cache = self.cache();
        f.debug_struct("Maths")
            .field("entries", &cache.entries.len())
            .field("bytes", &cache.bytes)
            .field("rendered", &self.rendered())
            .finish()
    }
}

impl Default for Maths {
    fn default() -> Self {
        Self::new()
    }
}

/// The key of a fragment.
fn key(math: &str) -> Key {
    Sha256::digest(math.as_bytes()).into()
}

/// Why a fragment cannot be drawn, in words.
fn reason(error: &RenderError) -> String {
    match error {
        RenderError::InvalidMath { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

impl Maths {
    /// A cache with a typesetter of its own. [`Renderer::new`] loads the typst library and reads
    /// the embedded fonts (unpacked once per process): tens of milliseconds, once.
    pub fn new() -> Self {
        Self::with_renderer(Arc::new(Renderer::new()))
    }

    /// A cache typesetting with `renderer` (the service's, to load the fonts once).
    pub fn with_renderer(renderer: Arc<Renderer>) -> Self {
        Maths {
            inner: Arc::new(Inner {
                renderer,
                cache: Mutex::new(Cache::default()),
                rendered: AtomicU64::new(0),
            }),
        }
    }

    fn cache(&self) -> MutexGuard<'_, Cache> {
        // The cache is consistent between statements: a panic elsewhere leaves it usable.
        self.inner
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many fragments this cache has typeset (each at most once while it stays cached).
    pub fn rendered(&self) -> u64 {
        self.inner.rendered.load(Ordering::Relaxed)
    }

    /// Typesets, on the blocking pool, every fragment of `texts` not yet cached, so that
    /// [`Maths::rich`] shows them drawn. Text without `$` costs nothing; text whose dollars do
    /// not pair up holds no maths.
    pub async fn prepare<I>(&self, texts: I)
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let mut wanted: Vec<(Key, String)> = Vec::new();
        {
            let cache = self.cache();
            for text in texts {
                let text = text.as_ref();
                if !text.contains('$') {
                    continue;
                }
                let Ok(parts) = pieces(text) else { continue };
                for part in parts {
                    if let Piece::Math(math) = part {
                        let key = key(math);
                        if !cache.entries.contains_key(&key)
                            && !wanted.iter().any(|(k, _)| *k == key)
                        {
                            wanted.push((key, math.to_owned()));
                        }
                    }
                }
            }
        }
        if wanted.is_empty() {
            return;
        }
        let renderer = self.inner.renderer.clone();
        let drawn = tokio::task::spawn_blocking(move || {
            wanted
                .into_iter()
                .map(|(key, math)| {
                    // A panic in the typesetter costs this fragment only, which is then
                    // remembered as one that cannot be drawn.
                    let drawn =
                        std::panic::catch_unwind(AssertUnwindSafe(|| renderer.math_svg(&math)))
                            .unwrap_or_else(|_| {
                                Err(RenderError::Typeset("the typesetter failed".to_owned()))
                            });
                    (key, drawn.map(Arc::from).map_err(|e| reason(&e)))
                })
                .collect::<Vec<_>>()
        })
        .await;
        match drawn {
            Ok(drawn) => {
                self.inner
                    .rendered
                    .fetch_add(drawn.len() as u64, Ordering::Relaxed);
                let mut cache = self.cache();
                for (key, drawn) in drawn {
                    cache.insert(key, drawn);
                }
            }
            Err(e) => tracing::error!(error = %e, "typesetting maths for a page failed"),
        }
    }

    /// `text` as markup: plain text escaped, each piece of maths as its drawing inside
    /// `<span class="math" role="img" aria-label="…">` (labelled with its words, [`spoken`]). Maths not
    /// drawn (not prepared, or that cannot be) is shown as its source in
    /// `<code class="math-source">`, with why in its `title` when it cannot be drawn. Text
    /// whose dollars do not pair up is shown as it is.
    pub fn rich(&self, text: &str) -> Markup {
        if !text.contains('$') {
            return html! { (text) };
        }
        let Ok(parts) = pieces(text) else {
            return html! { (text) };
        };
        let shown: Vec<(Piece<'_>, Option<Drawn>)> = {
            let cache = self.cache();
            parts
                .into_iter()
                .map(|part| {
                    let drawn = match &part {
                        Piece::Math(math) => cache.entries.get(&key(math)).cloned(),
                        Piece::Text(_) => None,
                    };
                    (part, drawn)
                })
                .collect()
        };
        html! {
            @for (part, drawn) in &shown {
                @match (part, drawn) {
                    (Piece::Text(text), _) => (text),
                    // Typst's drawing of checked maths, rebuilt through an allow-list: never
                    // the fragment's own text.
                    (Piece::Math(math), Some(Ok(svg))) => {
                        span.math role="img" aria-label=(spoken(math)) { (PreEscaped(&**svg)) }
                    }
                    (Piece::Math(math), Some(Err(why))) => {
                        code.math-source title=(why) { (math) }
                    }
                    (Piece::Math(math), None) => code.math-source { (math) },
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared_maths() -> Maths {
        use std::sync::OnceLock;
        static RENDERER: OnceLock<Arc<Renderer>> = OnceLock::new();
        Maths::with_renderer(RENDERER.get_or_init(|| Arc::new(Renderer::new())).clone())
    }

    #[tokio::test]
    async fn prepared_maths_is_drawn_inline_and_text_is_escaped() {
        let maths = shared_maths();
        let text = "Find <b>$z^2$</b> in the form $a + b i$, costing \\$5 & more.";
        let started = std::time::Instant::now();
        maths.prepare([text]).await;
        println!("prepare, two fragments: {:?}", started.elapsed());
        assert_eq!(maths.rendered(), 2);
        let html = maths.rich(text).into_string();
        assert!(
            html.starts_with(
                "Find &lt;b&gt;<span class=\"math\" role=\"img\" aria-label=\"z squared\"><svg "
            ),
            "{html}"
        );
        assert!(html.contains("</svg></span>&lt;/b&gt; in the form <span class=\"math\" role=\"img\" aria-label=\"a + b i\"><svg "), "{html}");
        assert!(
            html.ends_with("</svg></span>, costing $5 &amp; more."),
            "{html}"
        );
        assert!(!html.contains("<b>"), "{html}");
        assert!(!html.contains("style"), "{html}");
        // The drawing is the typesetter's.
        let svg = maths.inner.renderer.math_svg("z^2").expect("renders");
        assert!(html.contains(&svg), "{html}");
    }

    #[tokio::test]
    async fn text_without_maths_or_with_unpaired_dollars_is_escaped_text() {
        let maths = shared_maths();
        maths.prepare(["<i>plain</i>", "costs $5 <b>"]).await;
        assert_eq!(maths.rendered(), 0);
        assert_eq!(
            maths.rich("<i>plain</i>").into_string(),
            "&lt;i&gt;plain&lt;/i&gt;"
        );
        assert_eq!(
            maths.rich("costs $5 <b>").into_string(),
            "costs $5 &lt;b&gt;"
        );
    }

    #[tokio::test]
    async fn maths_that_cannot_be_drawn_is_escaped_source_code() {
        let maths = shared_maths();
        let text = "a $#read(\"<script>\")$ b $std.eval(\"1\")$ c $nosuchfunction(x)$";
        maths.prepare([text]).await;
        assert_eq!(maths.rendered(), 3);
        let html = maths.rich(text).into_string();
        assert!(!html.contains("<svg"), "{html}");
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.starts_with("a <code class=\"math-source\" title=\"maths may not contain `#` (code)\">#read(&quot;&lt;script&gt;&quot;)</code> b "), "{html}");
        assert!(html.contains("<code class=\"math-source\" title=\"maths may not use `std` (the standard library)\">std.eval(&quot;1&quot;)</code>"), "{html}");
        assert!(html.contains("c <code class=\"math-source\" title=\"typesetting failed: unknown variable: nosuchfunction"), "{html}");
        // Failures are remembered: not typeset again.
        maths.prepare([text]).await;
        assert_eq!(maths.rendered(), 3);
    }

    #[tokio::test]
    async fn maths_not_prepared_is_escaped_source_code() {
        let maths = shared_maths();
        let html = maths.rich("x $a < b$ y").into_string();
        assert_eq!(html, "x <code class=\"math-source\">a &lt; b</code> y");
    }

    #[tokio::test]
    async fn the_cache_is_reused_and_each_fragment_drawn_once() {
        let maths = shared_maths();
        let texts = vec![
            "$x^2$ and $x^2$ again".to_owned(),
            "$x^2$ and $y$".to_owned(),
        ];
        maths.prepare(&texts).await;
        assert_eq!(maths.rendered(), 2);
        let started = std::time::Instant::now();
        maths.prepare(&texts).await;
        println!("prepare, all cached: {:?}", started.elapsed());
        assert_eq!(maths.rendered(), 2);
        // Clones share the cache.
        let clone = maths.clone();
        clone.prepare(["$y$ then $z$"]).await;
        assert_eq!(maths.rendered(), 3);
        assert!(maths.rich("$z$").into_string().contains("<svg"));
    }

    #[test]
    fn the_cache_drops_its_oldest_entries_beyond_its_bounds() {
        let mut cache = Cache::default();
        for i in 0..MAX_ENTRIES + 10 {
            cache.insert(key(&i.to_string()), Err("no".to_owned()));
        }
        assert_eq!(cache.entries.len(), MAX_ENTRIES);
        assert!(!cache.entries.contains_key(&key("0")));
        assert!(
            cache
                .entries
                .contains_key(&key(&(MAX_ENTRIES + 9).to_string()))
        );
        let big: Arc<str> = Arc::from("x".repeat(MAX_BYTES / 4));
        for i in 0..6 {
            cache.insert(key(&format!("big{i}")), Ok(big.clone()));
        }
        assert!(cache.bytes <= MAX_BYTES);
        assert!(!cache.entries.contains_key(&key("big0")));
        assert!(cache.entries.contains_key(&key("big5")));
        assert_eq!(
            cache.bytes,
            cache
                .entries
                .values()
                .map(|d| d.as_ref().map_or(0, |s| s.len()))
                .sum::<usize>()
        );
    }
}
