//! `examkit-scanmaker`: makes a realistic scan of a completed question paper (the library behind
//! the command of the same name, which tests use directly).
//!
//! It rasterises each page of an examkit question paper, writes the student's answers by hand in
//! the answer spaces that the paper's recorded layout gives, and then treats the pages as a
//! scanner or a phone camera would: small skew, pages turned, noise and specks, JPEG, or a
//! perspective warp with uneven light and a dark border. The result is a PDF of page images
//! (no text layer) or one image file per page. See `examples/scanmaker/README.md`.

mod effects;
mod handwriting;
mod output;
mod paper;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_syntax::Pdf;
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::{RenderCache, RenderSettings};
use image::RgbImage;

use crate::effects::Rng;
use crate::handwriting::Pen;
use crate::output::Format;

/// The handwriting font used when `--font` is not given (Debian's `fonts-dkg-handwriting`).
const DEFAULT_FONT: &str = "/usr/share/fonts/truetype/fifthhorseman/dkg.ttf";

const USAGE: &str =
    "usage: examkit-scanmaker --paper question-paper.pdf --layout layout.json --out scan.pdf
       [--answers answers.json] [--format pdf|png|jpeg] [--rotate 3:180,5:90] [--skew 1.2]
       [--noise 0.03] [--photo] [--dpi 150] [--seed N] [--font PATH] [--quality 80]";

/// Why nothing was made.
#[derive(Debug)]
pub enum Error {
    /// The command line is wrong.
    Usage(String),
    /// An input file is missing or not what it should be.
    Input(String),
    /// The output could not be written.
    Output(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Usage(m) => write!(f, "{m}\n{USAGE}"),
            Error::Input(m) | Error::Output(m) => f.write_str(m),
        }
    }
}

/// What the command line asks for.
#[derive(Debug)]
pub struct Options {
    paper: PathBuf,
    layout: PathBuf,
    answers: Option<PathBuf>,
    out: PathBuf,
    format: Format,
    rotate: BTreeMap<u32, u32>,
    skew: f64,
    noise: f64,
    photo: bool,
    dpi: u32,
    seed: u64,
    font: PathBuf,
    quality: u8,
}

/// Reads the command line's arguments (without the program name).
pub fn parse_args(args: &[String]) -> Result<Options, Error> {
    let mut paper = None;
    let mut layout = None;
    let mut answers = None;
    let mut out: Option<PathBuf> = None;
    let mut format = None;
    let mut rotate = BTreeMap::new();
    let mut skew = 0.6;
    let mut noise = 0.02;
    let mut photo = false;
    let mut dpi = 150;
    let mut seed = 1;
    let mut font = PathBuf::from(DEFAULT_FONT);
    let mut quality = 80;
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        if flag == "--photo" {
            photo = true;
            i += 1;
            continue;
        }
        if flag == "--help" || flag == "-h" {
            return Err(Error::Usage(
                "examkit-scanmaker: makes a scan of a completed question paper".into(),
            ));
        }
        let value = args
            .get(i + 1)
            .ok_or_else(|| Error::Usage(format!("{flag} needs a value")))?;
        let number = |what: &str| -> Result<f64, Error> {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::Usage(format!("{flag} takes {what}, not {value:?}")))
        };
        match flag {
            "--paper" => paper = Some(PathBuf::from(value)),
            "--layout" => layout = Some(PathBuf::from(value)),
            "--answers" => answers = Some(PathBuf::from(value)),
            "--out" => out = Some(PathBuf::from(value)),
            "--font" => font = PathBuf::from(value),
            "--format" => {
                format = Some(Format::parse(value).ok_or_else(|| {
                    Error::Usage(format!("--format is pdf, png or jpeg, not {value:?}"))
                })?)
            }
            "--rotate" => rotate = parse_rotations(value)?,
            "--skew" => {
                skew = number("degrees")?;
                if !(0.0..=15.0).contains(&skew) {
                    return Err(Error::Usage("--skew is 0 to 15 degrees".into()));
                }
            }
            "--noise" => {
                noise = number("a fraction")?;
                if !(0.0..=0.5).contains(&noise) {
                    return Err(Error::Usage("--noise is 0 to 0.5".into()));
                }
            }
            "--dpi" => {
                dpi = value
                    .parse()
                    .ok()
                    .filter(|d| (50..=600).contains(d))
                    .ok_or_else(|| Error::Usage("--dpi is a whole number from 50 to 600".into()))?;
            }
            "--seed" => {
                seed = value.parse().map_err(|_| {
                    Error::Usage(format!("--seed takes a whole number, not {value:?}"))
                })?;
            }
            "--quality" => {
                quality = value
                    .parse()
                    .ok()
                    .filter(|q| (10..=100).contains(q))
                    .ok_or_else(|| Error::Usage("--quality is 10 to 100".into()))?;
            }
            other => return Err(Error::Usage(format!("unknown option {other:?}"))),
        }
        i += 2;
    }
    let out = out.ok_or_else(|| Error::Usage("--out is required".into()))?;
    let format = match format {
        Some(f) => f,
        None => out
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Format::parse)
            .unwrap_or(Format::Pdf),
    };
    Ok(Options {
        paper: paper.ok_or_else(|| Error::Usage("--paper is required".into()))?,
        layout: layout.ok_or_else(|| Error::Usage("--layout is required".into()))?,
        answers,
        out,
        format,
        rotate,
        skew,
        noise,
        photo,
        dpi,
        seed,
        font,
        quality,
    })
}

/// `3:180,5:90` → page 3 turned half round, page 5 a quarter turn clockwise.
fn parse_rotations(text: &str) -> Result<BTreeMap<u32, u32>, Error> {
    let mut out = BTreeMap::new();
    for item in text.split(',').filter(|s| !s.trim().is_empty()) {
        let bad = || {
            Error::Usage(format!(
                "--rotate takes PAGE:DEGREES pairs such as 3:180,5:90 (degrees 0, 90, 180 or 270), not {item:?}"
            ))
        };
        let (page, degrees) = item.trim().split_once(':').ok_or_else(bad)?;
        let page: u32 = page.parse().ok().filter(|p| *p >= 1).ok_or_else(bad)?;
        let degrees: u32 = degrees
            .parse()
            .ok()
            .filter(|d| [0, 90, 180, 270].contains(d))
            .ok_or_else(bad)?;
        out.insert(page, degrees);
    }
    Ok(out)
}

fn read(path: &PathBuf, what: &str) -> Result<Vec<u8>, Error> {
    std::fs::read(path)
        .map_err(|e| Error::Input(format!("cannot read the {what} {}: {e}", path.display())))
}

/// Renders every page of the PDF at `dpi`, on white.
fn rasterise(bytes: Vec<u8>, dpi: u32) -> Result<Vec<RgbImage>, Error> {
    // A damaged file must give an error, not a crash.
    let pdf = catch_unwind(AssertUnwindSafe(|| Pdf::new(bytes)))
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| Error::Input("the paper is not a readable PDF".into()))?;
    let scale = dpi as f32 / 72.0;
    let mut out = Vec::new();
    for page in pdf.pages().iter() {
        let (w_pt, h_pt) = page.render_dimensions();
        let (w, h) = ((w_pt * scale).round(), (h_pt * scale).round());
        if !(w >= 1.0 && h >= 1.0 && w <= f32::from(u16::MAX) && h <= f32::from(u16::MAX)) {
            return Err(Error::Input(
                "a page of the paper has no usable size".into(),
            ));
        }
        let settings = RenderSettings {
            x_scale: scale,
            y_scale: scale,
            width: Some(w as u16),
            height: Some(h as u16),
            bg_color: WHITE,
        };
        let pixmap = catch_unwind(AssertUnwindSafe(|| {
            let cache = RenderCache::new();
            hayro::render(page, &cache, &InterpreterSettings::default(), &settings)
        }))
        .map_err(|_| Error::Input("a page of the paper could not be rendered".into()))?;
        let (pw, ph) = (u32::from(pixmap.width()), u32::from(pixmap.height()));
        let mut rgb = Vec::with_capacity(pw as usize * ph as usize * 3);
        for px in pixmap.data() {
            // Composited over white: alpha is 255, so premultiplied equals straight colour.
            rgb.extend_from_slice(&[px.r, px.g, px.b]);
        }
        out.push(
            RgbImage::from_raw(pw, ph, rgb)
                .ok_or_else(|| Error::Input("a page could not be rendered".into()))?,
        );
    }
    if out.is_empty() {
        return Err(Error::Input("the paper has no pages".into()));
    }
    Ok(out)
}

/// Makes the scan; returns the files written.
pub fn run(options: &Options) -> Result<Vec<PathBuf>, Error> {
    let layout_text = String::from_utf8(read(&options.layout, "layout")?)
        .map_err(|_| Error::Input("the layout is not UTF-8 text".into()))?;
    let layout = paper::read_layout(&layout_text)?;
    let answers = match &options.answers {
        Some(path) => {
            let text = String::from_utf8(read(path, "answers")?)
                .map_err(|_| Error::Input("the answers are not UTF-8 text".into()))?;
            paper::read_answers(&text, &layout)?
        }
        None => paper::Answers::new(),
    };
    let mut pages = rasterise(read(&options.paper, "paper")?, options.dpi)?;
    if !layout.pages.is_empty() && layout.pages.len() != pages.len() {
        return Err(Error::Input(format!(
            "the layout is of a paper of {} pages, but the PDF has {}",
            layout.pages.len(),
            pages.len()
        )));
    }
    for (i, (geometry, page)) in layout.pages.iter().zip(&pages).enumerate() {
        let expected = geometry.width_pt / geometry.height_pt;
        let actual = f64::from(page.width()) / f64::from(page.height());
        let close = (expected - actual).abs() <= 0.01 * expected;
        if !close {
            return Err(Error::Input(format!(
                "page {} of the PDF is not the shape the layout records: is the layout of this paper?",
                i + 1
            )));
        }
    }
    let mut rng = Rng::new(options.seed);
    let font = std::fs::read(&options.font).map_err(|e| {
        Error::Input(format!(
            "cannot read the handwriting font {}: {e} (install it with `apt-get install fonts-dkg-handwriting`, or give --font)",
            options.font.display()
        ))
    })?;
    let pen = Pen::new(font, options.dpi, &mut rng).map_err(Error::Input)?;
    let sizes: Vec<(u32, u32)> = pages.iter().map(|p| p.dimensions()).collect();

    for q in &layout.questions {
        let Some((_, given)) = answers
            .iter()
            .find(|(id, _)| id.eq_ignore_ascii_case(&q.question_id))
        else {
            continue;
        };
        let shared = !q.answer_space.is_empty();
        let shared_slots = pen.slots(&q.answer_space, &sizes);
        let mut next_shared = 0;
        for part in &q.parts {
            let Some(text) = given.get(&part.part_id).filter(|t| !t.trim().is_empty()) else {
                continue;
            };
            let label = part
                .label
                .as_deref()
                .map(|l| format!("{l} "))
                .unwrap_or_default();
            let (next, dropped) = if shared {
                // Writing pages shared by the parts: one answer after another, each labelled.
                let text = format!("{label}{text}");
                pen.write(&mut pages, &shared_slots, next_shared, &text, &mut rng)
            } else {
                let slots = pen.slots(&part.answer_space, &sizes);
                if slots.is_empty() {
                    eprintln!(
                        "warning: question {} part {} has no answer space on the paper: its answer is not written",
                        q.number, part.part_id
                    );
                    continue;
                }
                pen.write(&mut pages, &slots, 0, text, &mut rng)
            };
            if shared {
                next_shared = next;
            }
            if dropped > 0 {
                eprintln!(
                    "warning: question {} part {}: {dropped} words did not fit in the answer space",
                    q.number, part.part_id
                );
            }
        }
    }

    let mut finished = Vec::with_capacity(pages.len());
    for (i, page) in pages.into_iter().enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let angle = rng.range(-options.skew, options.skew);
        let mut image = if options.photo {
            effects::photo(&page, angle, &mut rng)
        } else {
            effects::skew(&page, angle)
        };
        effects::noise(&mut image, options.noise, &mut rng);
        let turn = options.rotate.get(&number).copied().unwrap_or(0);
        finished.push(effects::quarter_turn(image, turn));
    }
    output::write(
        &finished,
        options.format,
        &options.out,
        options.dpi,
        options.quality,
    )
}

/// Parses `args` as the command line does and makes the scan.
pub fn make(args: &[&str]) -> Result<Vec<PathBuf>, Error> {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    run(&parse_args(&args)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn options_are_read_with_defaults() {
        let o = parse_args(&args(&[
            "--paper",
            "p.pdf",
            "--layout",
            "l.json",
            "--out",
            "scan.png",
            "--rotate",
            "3:180, 5:90",
            "--photo",
        ]))
        .expect("valid");
        assert_eq!(o.format, Format::Png);
        assert_eq!(o.rotate.get(&3), Some(&180));
        assert_eq!(o.rotate.get(&5), Some(&90));
        assert!(o.photo && o.dpi == 150 && o.seed == 1);
        let o = parse_args(&args(&[
            "--paper", "p", "--layout", "l", "--out", "s", "--format", "jpeg",
        ]))
        .expect("valid");
        assert_eq!(o.format, Format::Jpeg);
    }

    #[test]
    fn bad_options_are_refused() {
        for bad in [
            &["--paper", "p", "--layout", "l"][..],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--rotate", "3:45",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--rotate", "0:90",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--rotate", "3",
            ],
            &["--paper", "p", "--layout", "l", "--out", "s", "--dpi", "20"],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--skew", "nan",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--noise", "2",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--format", "gif",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--colour", "red",
            ],
            &["--paper", "p", "--layout", "l", "--out"],
        ] {
            assert!(parse_args(&args(bad)).is_err(), "{bad:?}");
        }
    }
}
