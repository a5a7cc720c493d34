//! `examkit-scanmaker`: makes a realistic scan of a completed question paper (the library behind
//! the command of the same name, which tests use directly).
//!
//! It rasterises each page of an examkit question paper, writes the student's answers by hand in
//! the answer spaces that the paper's recorded layout gives, and then treats the pages as a
//! scanner or a phone camera would: grey uneven paper, skew, a page smaller than the glass on a
//! grey bed, pages turned, blur, noise and specks, JPEG; or a photo with perspective, a curled
//! edge, uneven light and a dark border; on request an ink blot over a page's code, so that only
//! a person can place it. The result is a PDF of page images (no text layer) or one image file
//! per page, and, on request, the truth about where every answer's ink ended up (`--truth`). See
//! `examples/scanmaker/README.md`.

mod effects;
mod handwriting;
mod output;
mod paper;
mod truth;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_syntax::Pdf;
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::{RenderCache, RenderSettings};
use image::RgbImage;

use crate::effects::{Curl, Placement, Rng};
use crate::handwriting::{Pen, WrittenLine};
use crate::output::Format;
pub use crate::output::pdf_of_images;
use crate::truth::{Blank, Carry, PageTruth, Truth, Written};

/// The handwriting font used when `--font` is not given (Debian's `fonts-dkg-handwriting`).
const DEFAULT_FONT: &str = "/usr/share/fonts/truetype/fifthhorseman/dkg.ttf";

const USAGE: &str =
    "usage: examkit-scanmaker --paper question-paper.pdf --layout layout.json --out scan.pdf
       [--answers answers.json] [--format pdf|png|jpeg] [--rotate 3:180,5:90] [--skew 1.2|0.5:3]
       [--scale 0.94:1] [--shift 0.02] [--bed 160] [--paper-tone 0.9:0.95] [--uneven 0.03]
       [--blur 0.6:0.9] [--noise 0.03] [--photo] [--perspective 8] [--curl 0.01]
       [--dpi 150] [--seed N] [--font PATH] [--quality 80] [--truth truth.json] [--pages 5:8]
       [--name \"Ada Lovelace\"] [--blot-code 2,3]";

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

/// A value drawn for each page within `low..=high` (the same every time when they are equal).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    low: f64,
    high: f64,
}

impl Spread {
    fn fixed(v: f64) -> Spread {
        Spread { low: v, high: v }
    }

    fn pick(&self, rng: &mut Rng) -> f64 {
        rng.range(self.low, self.high)
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
    /// The skew's size; with `skew_either_way`, turned either way by it.
    skew: Spread,
    skew_either_way: bool,
    scale: Option<Spread>,
    shift: f64,
    bed: Option<f64>,
    paper_tone: Spread,
    uneven: f64,
    blur: Spread,
    noise: f64,
    photo: bool,
    perspective: Option<f64>,
    curl: f64,
    dpi: u32,
    seed: u64,
    font: PathBuf,
    quality: u8,
    truth: Option<PathBuf>,
    /// Only these pages of the paper (first and last, from 1), as one copy of a class set.
    pages: Option<(u32, u32)>,
    /// The name the student writes on the cover's name line.
    name: Option<String>,
    /// Pages (of this scan, from 1) whose page code an ink blot covers, so no code is read.
    blot_code: Vec<u32>,
}

/// `A` or `A:B` within `low..=high`: a fixed value or a range (`A <= B`).
fn parse_spread(flag: &str, value: &str, low: f64, high: f64, what: &str) -> Result<Spread, Error> {
    let bad = || {
        Error::Usage(format!(
            "{flag} takes {what} from {low} to {high}, or a range such as {low}:{high}, not {value:?}"
        ))
    };
    let number = |t: &str| -> Result<f64, Error> {
        t.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && (low..=high).contains(v))
            .ok_or_else(bad)
    };
    match value.split_once(':') {
        Some((a, b)) => {
            let (a, b) = (number(a)?, number(b)?);
            if a > b {
                return Err(bad());
            }
            Ok(Spread { low: a, high: b })
        }
        None => Ok(Spread::fixed(number(value)?)),
    }
}

/// Reads the command line's arguments (without the program name).
pub fn parse_args(args: &[String]) -> Result<Options, Error> {
    let mut paper = None;
    let mut layout = None;
    let mut answers = None;
    let mut out: Option<PathBuf> = None;
    let mut format = None;
    let mut rotate = BTreeMap::new();
    let mut skew = Spread {
        low: -0.6,
        high: 0.6,
    };
    let mut skew_either_way = false;
    let mut scale = None;
    let mut shift = 0.0;
    let mut bed = None;
    let mut paper_tone = Spread::fixed(1.0);
    let mut uneven = 0.0;
    let mut blur = Spread::fixed(0.0);
    let mut noise = 0.02;
    let mut photo = false;
    let mut perspective = None;
    let mut curl = 0.0;
    let mut truth = None;
    let mut dpi = 150;
    let mut seed = 1;
    let mut font = PathBuf::from(DEFAULT_FONT);
    let mut quality = 80;
    let mut pages = None;
    let mut name = None;
    let mut blot_code = Vec::new();
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
                skew = parse_spread(flag, value, 0.0, 15.0, "degrees")?;
                // A single value D turns each page by up to D either way; a range A:B by A to
                // B degrees, either way.
                skew_either_way = value.contains(':');
                if !skew_either_way {
                    skew = Spread {
                        low: -skew.high,
                        high: skew.high,
                    };
                }
            }
            "--scale" => scale = Some(parse_spread(flag, value, 0.5, 1.0, "a page scale")?),
            "--shift" => {
                shift = number("a fraction")?;
                if !(0.0..=0.2).contains(&shift) {
                    return Err(Error::Usage("--shift is 0 to 0.2".into()));
                }
            }
            "--bed" => {
                let tone = number("a gray level")?;
                if !(0.0..=255.0).contains(&tone) {
                    return Err(Error::Usage("--bed is a gray level from 0 to 255".into()));
                }
                bed = Some(tone);
            }
            "--paper-tone" => paper_tone = parse_spread(flag, value, 0.5, 1.0, "a paper tone")?,
            "--uneven" => {
                uneven = number("a fraction")?;
                if !(0.0..=0.2).contains(&uneven) {
                    return Err(Error::Usage("--uneven is 0 to 0.2".into()));
                }
            }
            "--blur" => blur = parse_spread(flag, value, 0.0, 3.0, "pixels")?,
            "--perspective" => {
                let degrees = number("degrees")?;
                if !(0.0..=20.0).contains(&degrees) {
                    return Err(Error::Usage("--perspective is 0 to 20 degrees".into()));
                }
                perspective = Some(degrees);
            }
            "--curl" => {
                curl = number("a fraction")?;
                if !(0.0..=0.1).contains(&curl) {
                    return Err(Error::Usage("--curl is 0 to 0.1".into()));
                }
            }
            "--truth" => truth = Some(PathBuf::from(value)),
            "--name" => {
                if value.trim().is_empty() || value.chars().count() > 120 {
                    return Err(Error::Usage("--name is 1 to 120 characters".into()));
                }
                name = Some(value.clone());
            }
            "--blot-code" => blot_code = parse_pages(value)?,
            "--pages" => {
                let range = value
                    .split_once(':')
                    .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
                    .filter(|&(a, b)| a >= 1 && a <= b)
                    .ok_or_else(|| {
                        Error::Usage(format!(
                            "--pages takes FIRST:LAST, pages from 1 such as 5:8, not {value:?}"
                        ))
                    })?;
                pages = Some(range);
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
    if !photo && (perspective.is_some() || curl > 0.0) {
        return Err(Error::Usage(
            "--perspective and --curl describe a photo: give --photo too".into(),
        ));
    }
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
        skew_either_way,
        scale,
        shift,
        bed,
        paper_tone,
        uneven,
        blur,
        noise,
        photo,
        perspective,
        curl,
        dpi,
        seed,
        font,
        quality,
        truth,
        pages,
        name,
        blot_code,
    })
}

/// `2,5` → pages 2 and 5 (from 1).
fn parse_pages(text: &str) -> Result<Vec<u32>, Error> {
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|item| {
            item.trim()
                .parse::<u32>()
                .ok()
                .filter(|p| *p >= 1)
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "--blot-code takes pages from 1 such as 2 or 2,5, not {item:?}"
                    ))
                })
        })
        .collect()
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

/// Renders every page of the PDF at `dpi` (or those of `range`, first and last from 1), on white.
fn rasterise(bytes: Vec<u8>, dpi: u32, range: Option<(u32, u32)>) -> Result<Vec<RgbImage>, Error> {
    // A damaged file must give an error, not a crash.
    let pdf = catch_unwind(AssertUnwindSafe(|| Pdf::new(bytes)))
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| Error::Input("the paper is not a readable PDF".into()))?;
    let scale = dpi as f32 / 72.0;
    let mut out = Vec::new();
    let pages = pdf.pages();
    if let Some((_, last)) = range
        && last as usize > pages.len()
    {
        return Err(Error::Input(format!(
            "--pages asks for page {last}, but the paper has {} pages",
            pages.len()
        )));
    }
    for (i, page) in pages.iter().enumerate() {
        if let Some((first, last)) = range
            && !(first as usize..=last as usize).contains(&(i + 1))
        {
            continue;
        }
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
    let mut pages = rasterise(read(&options.paper, "paper")?, options.dpi, options.pages)?;
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

    // The student's name on the cover's name line, one line of writing.
    if let Some(name) = &options.name {
        let space = layout.name_space.ok_or_else(|| {
            Error::Input("--name: the layout records no name line (it predates name lines)".into())
        })?;
        let slot = pen
            .name_slot(&space, &sizes)
            .ok_or_else(|| Error::Input("--name: the name line is on a page not scanned".into()))?;
        let (_, dropped, _) = pen.write(&mut pages, &[slot], 0, name, &mut rng);
        if dropped > 0 {
            eprintln!("warning: {dropped} words of the name did not fit on its line");
        }
    }

    // What was written where, and which answer spaces stay blank (page pixels).
    let mut written: Vec<(usize, String, WrittenLine)> = Vec::new();
    let mut blanks: Vec<(usize, Option<String>, u32, [f64; 4])> = Vec::new();
    let region_px = |r: &paper::Region| -> Option<[f64; 4]> {
        let &(w, h) = sizes.get((r.page as usize).wrapping_sub(1))?;
        let (w, h) = (f64::from(w), f64::from(h));
        Some([r.x * w, r.y * h, (r.x + r.width) * w, (r.y + r.height) * h])
    };
    for (qi, q) in layout.questions.iter().enumerate() {
        let given = answers
            .iter()
            .find(|(id, _)| id.eq_ignore_ascii_case(&q.question_id))
            .map(|(_, parts)| parts);
        let shared = !q.answer_space.is_empty();
        let shared_slots = pen.slots(&q.answer_space, &sizes);
        let mut next_shared = 0;
        let mut shared_lines: Vec<WrittenLine> = Vec::new();
        for part in &q.parts {
            let Some(text) = given
                .and_then(|g| g.get(&part.part_id))
                .filter(|t| !t.trim().is_empty())
            else {
                if !shared {
                    for r in &part.answer_space {
                        if let Some(b) = region_px(r) {
                            blanks.push((qi, Some(part.part_id.clone()), r.page, b));
                        }
                    }
                }
                continue;
            };
            let label = part
                .label
                .as_deref()
                .map(|l| format!("{l} "))
                .unwrap_or_default();
            let (next, dropped, lines) = if shared {
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
                shared_lines.extend(lines.iter().cloned());
            }
            written.extend(lines.into_iter().map(|l| (qi, part.part_id.clone(), l)));
            if dropped > 0 {
                eprintln!(
                    "warning: question {} part {}: {dropped} words did not fit in the answer space",
                    q.number, part.part_id
                );
            }
        }
        // What is left of a shared writing space below the last line written on it.
        let pitch = 8.0 * f64::from(options.dpi) / 25.4;
        for r in &q.answer_space {
            let Some(b) = region_px(r) else { continue };
            let bottom = shared_lines
                .iter()
                .filter(|l| l.page == r.page)
                .flat_map(|l| l.glyphs.iter())
                .filter(|g| (g[1] + g[3]) / 2.0 >= b[1] && (g[1] + g[3]) / 2.0 <= b[3])
                .map(|g| g[3])
                .fold(f64::NEG_INFINITY, f64::max);
            let top = if bottom.is_finite() {
                bottom + pitch / 2.0
            } else {
                b[1]
            };
            if b[3] - top >= pitch {
                blanks.push((qi, None, r.page, [b[0], top, b[2], b[3]]));
            }
        }
    }

    let mut finished = Vec::with_capacity(pages.len());
    let mut truth = Vec::with_capacity(pages.len());
    for (i, mut page) in pages.into_iter().enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let (w, h) = page.dimensions();
        let mut angle = options.skew.pick(&mut rng);
        if options.skew_either_way && rng.unit() < 0.5 {
            angle = -angle;
        }
        let scale = match options.scale {
            Some(s) => s.pick(&mut rng),
            None if options.photo => rng.range(0.84, 0.9),
            None => 1.0,
        };
        let shift = if options.shift > 0.0 {
            (
                rng.range(-options.shift, options.shift) * f64::from(w),
                rng.range(-options.shift, options.shift) * f64::from(h),
            )
        } else {
            (0.0, 0.0)
        };
        if options.blot_code.contains(&number) {
            effects::blot_code(&mut page, options.dpi, &mut rng);
        }
        let tone = options.paper_tone.pick(&mut rng);
        effects::paper(&mut page, tone, options.uneven, &mut rng);
        let (placement, mut image) = if options.photo {
            let tilt = rng.range(0.0, options.perspective.unwrap_or(5.0));
            let axis = rng.range(0.0, std::f64::consts::TAU);
            let curl = (options.curl > 0.0).then(|| Curl {
                side: (rng.next_u64() % 4) as u8,
                lift: options.curl,
                reach: rng.range(0.25, 0.4),
            });
            let placement = Placement::camera((w, h), angle, scale, shift, tilt, axis, curl);
            let table = effects::table(placement.frame(), &mut rng);
            let mut image = placement.draw(&page, &table);
            effects::light(&mut image, &mut rng);
            (placement, image)
        } else {
            let placement = Placement::flat((w, h), angle, scale, shift);
            // The lid (near white) unless a bed is given; a bed shows the page's shadow.
            let bed = effects::bed(options.bed.unwrap_or(250.0), options.bed.is_some());
            let image = placement.draw(&page, &bed);
            (placement, image)
        };
        effects::blur(&mut image, options.blur.pick(&mut rng));
        effects::noise(&mut image, options.noise, &mut rng);
        let turn = options.rotate.get(&number).copied().unwrap_or(0);
        let carry = Carry {
            placement: &placement,
            page: (f64::from(w), f64::from(h)),
            turn,
        };
        truth.push(page_truth(
            &layout,
            number,
            &carry,
            &written,
            &blanks,
            options.photo,
            angle,
            scale,
        ));
        finished.push(effects::quarter_turn(image, turn));
    }
    let mut files = output::write(
        &finished,
        options.format,
        &options.out,
        options.dpi,
        options.quality,
    )?;
    if let Some(path) = &options.truth {
        let json = serde_json::to_string_pretty(&Truth { pages: truth })
            .map_err(|e| Error::Output(format!("the truth cannot be written: {e}")))?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::Output(format!("cannot make {}: {e}", parent.display())))?;
        }
        std::fs::write(path, json)
            .map_err(|e| Error::Output(format!("cannot write {}: {e}", path.display())))?;
        files.push(path.clone());
    }
    Ok(files)
}

/// The truth about output page `number`: its written answers' ink and its blank spaces.
#[allow(clippy::too_many_arguments)]
fn page_truth(
    layout: &paper::Layout,
    number: u32,
    carry: &Carry<'_>,
    written: &[(usize, String, WrittenLine)],
    blanks: &[(usize, Option<String>, u32, [f64; 4])],
    photo: bool,
    angle: f64,
    scale: f64,
) -> PageTruth {
    let (width, height) = {
        let (w, h) = carry.placement.frame();
        if carry.turn % 180 == 90 {
            (h, w)
        } else {
            (w, h)
        }
    };
    // The parts written on this page, in the order they were written.
    let mut parts: Vec<(usize, &str)> = Vec::new();
    for (qi, part, line) in written {
        if line.page == number && !parts.iter().any(|(q, p)| q == qi && p == part) {
            parts.push((*qi, part.as_str()));
        }
    }
    let written = parts
        .into_iter()
        .filter_map(|(qi, part)| {
            let q = layout.questions.get(qi)?;
            let lines: Vec<&WrittenLine> = written
                .iter()
                .filter(|(i, p, l)| *i == qi && p == part && l.page == number)
                .map(|(_, _, l)| l)
                .collect();
            let glyphs: Vec<[f64; 4]> = lines
                .iter()
                .flat_map(|l| l.glyphs.iter().copied())
                .collect();
            Some(Written {
                question: q.number,
                question_id: q.question_id.clone(),
                part: part.to_owned(),
                bbox: carry.boxes(&glyphs),
                lines: lines.iter().map(|l| carry.boxes(&l.glyphs)).collect(),
                clean: carry.clean(&glyphs),
            })
        })
        .collect();
    let blank = blanks
        .iter()
        .filter(|(_, _, page, _)| *page == number)
        .filter_map(|(qi, part, _, b)| {
            let q = layout.questions.get(*qi)?;
            let (corners, bbox) = carry.corners(*b);
            Some(Blank {
                question: q.number,
                question_id: q.question_id.clone(),
                part: part.clone(),
                bbox,
                corners,
                clean: carry.clean(&[*b]),
            })
        })
        .collect();
    PageTruth {
        page: number,
        width,
        height,
        turn: carry.turn,
        skew_degrees: angle,
        scale,
        photo,
        outline: carry.corners([0.0, 0.0, carry.page.0, carry.page.1]).0,
        written,
        blank,
    }
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
        assert_eq!(
            o.skew,
            Spread {
                low: -0.6,
                high: 0.6
            }
        );
        assert!(!o.skew_either_way && o.scale.is_none() && o.bed.is_none() && o.truth.is_none());
        assert_eq!(
            (o.paper_tone, o.blur),
            (Spread::fixed(1.0), Spread::fixed(0.0))
        );
    }

    #[test]
    fn blotted_codes_are_pages_from_one() {
        let with = |value: &str| {
            parse_args(&args(&[
                "--paper",
                "p",
                "--layout",
                "l",
                "--out",
                "s",
                "--blot-code",
                value,
            ]))
        };
        assert_eq!(with("2").expect("one page").blot_code, vec![2]);
        assert_eq!(with("2, 5").expect("two pages").blot_code, vec![2, 5]);
        for bad in ["0", "two", "2:3", "-1"] {
            assert!(matches!(with(bad), Err(Error::Usage(_))), "{bad}");
        }
        let none = parse_args(&args(&["--paper", "p", "--layout", "l", "--out", "s"]));
        assert!(none.expect("valid").blot_code.is_empty());
    }

    #[test]
    fn scanner_and_photo_options_are_read() {
        let o = parse_args(&args(&[
            "--paper",
            "p",
            "--layout",
            "l",
            "--out",
            "s.jpg",
            "--skew",
            "0.5:3",
            "--scale",
            "0.94:1",
            "--shift",
            "0.02",
            "--bed",
            "160",
            "--paper-tone",
            "0.9:0.95",
            "--uneven",
            "0.03",
            "--blur",
            "0.6:0.9",
            "--noise",
            "0.039",
            "--quality",
            "60",
            "--truth",
            "t.json",
        ]))
        .expect("valid");
        assert_eq!(
            o.skew,
            Spread {
                low: 0.5,
                high: 3.0
            }
        );
        assert!(o.skew_either_way);
        assert_eq!(
            o.scale,
            Some(Spread {
                low: 0.94,
                high: 1.0
            })
        );
        assert_eq!((o.shift, o.bed, o.uneven), (0.02, Some(160.0), 0.03));
        assert_eq!(
            o.paper_tone,
            Spread {
                low: 0.9,
                high: 0.95
            }
        );
        assert_eq!(
            o.blur,
            Spread {
                low: 0.6,
                high: 0.9
            }
        );
        assert_eq!(o.truth, Some(PathBuf::from("t.json")));
        let o = parse_args(&args(&[
            "--paper",
            "p",
            "--layout",
            "l",
            "--out",
            "s",
            "--photo",
            "--perspective",
            "8",
            "--curl",
            "0.01",
            "--scale",
            "0.86",
        ]))
        .expect("valid");
        assert_eq!((o.perspective, o.curl), (Some(8.0), 0.01));
        assert_eq!(o.scale, Some(Spread::fixed(0.86)));
    }

    #[test]
    fn a_name_is_one_to_120_characters() {
        let with = |name: &str| {
            parse_args(&args(&[
                "--paper", "p", "--layout", "l", "--out", "s", "--name", name,
            ]))
        };
        assert_eq!(
            with("Ada Lovelace").expect("valid").name.as_deref(),
            Some("Ada Lovelace")
        );
        for bad in ["", "   ", &"x".repeat(121)] {
            assert!(
                matches!(with(bad), Err(Error::Usage(ref m)) if m.contains("--name")),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_spread_is_a_value_or_a_range_within_bounds() {
        assert_eq!(
            parse_spread("--blur", "0.5", 0.0, 3.0, "pixels").ok(),
            Some(Spread::fixed(0.5))
        );
        assert_eq!(
            parse_spread("--blur", " 0.5 : 1 ", 0.0, 3.0, "pixels").ok(),
            Some(Spread {
                low: 0.5,
                high: 1.0
            })
        );
        for bad in [
            "", ":", "1:", "2:1", "4", "-1", "nan", "inf", "0.5:9", "a:b", "1:2:3",
        ] {
            assert!(
                parse_spread("--blur", bad, 0.0, 3.0, "pixels").is_err(),
                "{bad:?}"
            );
        }
        let mut rng = Rng::new(1);
        assert_eq!(Spread::fixed(0.7).pick(&mut rng), 0.7);
        let v = Spread {
            low: 0.9,
            high: 0.95,
        }
        .pick(&mut rng);
        assert!((0.9..0.95).contains(&v));
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
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--skew", "3:1",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--skew", "20",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--scale", "1.2",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--scale", "0.4:0.9",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--shift", "0.5",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--bed", "300",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--bed", "grey",
            ],
            &[
                "--paper",
                "p",
                "--layout",
                "l",
                "--out",
                "s",
                "--paper-tone",
                "0.3",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--uneven", "0.5",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--blur", "-1",
            ],
            &[
                "--paper",
                "p",
                "--layout",
                "l",
                "--out",
                "s",
                "--perspective",
                "8",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--curl", "0.01",
            ],
            &[
                "--paper",
                "p",
                "--layout",
                "l",
                "--out",
                "s",
                "--photo",
                "--perspective",
                "30",
            ],
            &[
                "--paper", "p", "--layout", "l", "--out", "s", "--photo", "--curl", "0.5",
            ],
            &["--paper", "p", "--layout", "l", "--out", "s", "--truth"],
        ] {
            assert!(parse_args(&args(bad)).is_err(), "{bad:?}");
        }
    }
}
