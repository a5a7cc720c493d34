//! Makes scans of a rendered sample paper with the `examkit-scanmaker` binary and reads them back
//! with poppler (`pdftoppm`, `pdftotext`) and `rqrr`: page images without a text layer, the
//! requested pages turned (their page code decodes where a turned page puts it), and ink added in
//! the answer spaces of the answered parts only.
//!
//! Needs poppler-utils and the handwriting font (`apt-get install -y poppler-utils
//! fonts-dkg-handwriting`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use examkit_pdf::{DocumentKind, PageCode, Region};

mod common;

use common::{DPI, QUESTIONS, example_answers, paper, render, scratch};

fn scanmaker(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_examkit-scanmaker"))
        .args(args)
        .output()
        .expect("run examkit-scanmaker");
    assert!(
        out.status.success(),
        "examkit-scanmaker {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?}: {e} (install poppler-utils: apt-get install -y poppler-utils)")
    });
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A greyscale page image.
struct Gray {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

impl Gray {
    fn at(&self, x: usize, y: usize) -> u8 {
        self.pixels[y * self.width + x]
    }
}

/// Every page of a PDF at `dpi`, with `pdftoppm -gray`.
fn pages(pdf: &Path, dpi: u32) -> Vec<Gray> {
    let prefix = pdf.with_extension("");
    run(Command::new("pdftoppm")
        .args(["-r", &dpi.to_string(), "-gray"])
        .arg(pdf)
        .arg(&prefix));
    let mut out = Vec::new();
    for n in 1.. {
        let found = (1..=3).find_map(|w| {
            let path = PathBuf::from(format!("{}-{:0w$}.pgm", prefix.display(), n, w = w));
            path.exists().then_some(path)
        });
        let Some(path) = found else { break };
        out.push(read_pgm(&std::fs::read(path).expect("read pgm")));
    }
    out
}

fn read_pgm(data: &[u8]) -> Gray {
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < 4 {
        while data[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while !data[i].is_ascii_whitespace() {
            i += 1;
        }
        fields.push(String::from_utf8_lossy(&data[start..i]).into_owned());
    }
    assert_eq!(fields[0], "P5");
    let width: usize = fields[1].parse().expect("width");
    let height: usize = fields[2].parse().expect("height");
    Gray {
        width,
        height,
        pixels: data[i + 1..].to_vec(),
    }
}

/// The QR codes on a page: payload and centre as fractions of the page.
fn codes(page: &Gray) -> Vec<(String, f64, f64)> {
    let mut image =
        rqrr::PreparedImage::prepare_from_greyscale(page.width, page.height, |x, y| page.at(x, y));
    image
        .detect_grids()
        .into_iter()
        .filter_map(|g| {
            let (_, payload) = g.decode().ok()?;
            let cx = g.bounds.iter().map(|p| p.x as f64).sum::<f64>() / 4.0;
            let cy = g.bounds.iter().map(|p| p.y as f64).sum::<f64>() / 4.0;
            Some((payload, cx / page.width as f64, cy / page.height as f64))
        })
        .collect()
}

/// Pixels inside `region` that are ink on the scan but paper on the clean page, with no ink of the
/// clean page within 2 pixels (the two renderers place edges a little differently). On a page
/// turned half round, the region is looked up turned too.
fn added_ink(scan: &Gray, clean: &Gray, r: &Region, turned: bool) -> usize {
    let (w, h) = (clean.width as f64, clean.height as f64);
    let (x0, x1) = (
        (r.x * w) as usize,
        (((r.x + r.width) * w) as usize).min(clean.width),
    );
    let (y0, y1) = (
        (r.y * h) as usize,
        (((r.y + r.height) * h) as usize).min(clean.height),
    );
    let mut count = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            let (sx, sy) = if turned {
                (scan.width - 1 - x, scan.height - 1 - y)
            } else {
                (x, y)
            };
            if sx < scan.width
                && sy < scan.height
                && scan.at(sx, sy) < 110
                && paper_around(clean, x, y)
            {
                count += 1;
            }
        }
    }
    count
}

/// Whether the clean page is paper within 2 pixels of a point.
fn paper_around(clean: &Gray, x: usize, y: usize) -> bool {
    let (x0, x1) = (x.saturating_sub(2), (x + 2).min(clean.width - 1));
    let (y0, y1) = (y.saturating_sub(2), (y + 2).min(clean.height - 1));
    (y0..=y1).all(|yy| (x0..=x1).all(|xx| clean.at(xx, yy) > 200))
}

#[test]
fn a_scan_has_image_pages_turned_as_asked_and_ink_only_in_answered_parts() {
    let dir = scratch("scan");
    let paper = paper(&QUESTIONS);
    let (pdf, layout_path, layout) = render(&paper, &dir);
    let scan = dir.join("scan.pdf");
    let printed = scanmaker(&[
        "--paper",
        pdf.to_str().expect("path"),
        "--layout",
        layout_path.to_str().expect("path"),
        "--answers",
        example_answers().to_str().expect("path"),
        "--out",
        scan.to_str().expect("path"),
        "--rotate",
        "2:180",
        "--skew",
        "0",
        "--noise",
        "0",
        "--dpi",
        &DPI.to_string(),
        "--seed",
        "5",
        "--name",
        "Ada Lovelace",
    ]);
    assert_eq!(printed.trim(), scan.display().to_string());

    // One image page per paper page, and no text layer.
    let clean = pages(&pdf, DPI);
    let scanned = pages(&scan, DPI);
    assert_eq!(scanned.len(), clean.len(), "page count");
    assert_eq!(scanned.len(), layout.pages.len());
    let doc = lopdf::Document::load(&scan).expect("a readable PDF");
    for (_, page_id) in doc.get_pages() {
        let page = doc.get_dictionary(page_id).expect("page");
        let resources = page
            .get(b"Resources")
            .and_then(|r| r.as_dict())
            .expect("resources");
        let xobjects = resources
            .get(b"XObject")
            .and_then(|x| x.as_dict())
            .expect("images");
        assert_eq!(xobjects.len(), 1, "one image per page");
        assert!(resources.get(b"Font").is_err(), "no fonts");
        for (_, image) in xobjects.iter() {
            let id = image.as_reference().expect("reference");
            let stream = doc
                .get_object(id)
                .and_then(|o| o.as_stream())
                .expect("stream");
            let filter = stream
                .dict
                .get(b"Filter")
                .and_then(|f| f.as_name())
                .expect("filter");
            assert_eq!(filter, b"DCTDecode");
        }
    }
    let text = run(Command::new("pdftotext").arg(&scan).arg("-"));
    assert!(
        String::from_utf8_lossy(&text).trim().is_empty(),
        "the scan has a text layer"
    );

    // The page codes decode: upright pages in the top right corner, page 2 turned half round
    // with its code in the bottom left corner.
    for (i, page) in scanned.iter().enumerate() {
        let number = u32::try_from(i + 1).expect("page");
        let expected = PageCode {
            kind: DocumentKind::QuestionPaper,
            paper_id: paper.paper_id,
            revision: paper.revision,
            page: number,
        };
        let found = codes(page);
        assert_eq!(found.len(), 1, "page {number}: one code");
        let (payload, x, y) = &found[0];
        assert_eq!(payload, &expected.to_payload(), "page {number}");
        if number == 2 {
            assert!(*x < 0.2 && *y > 0.92, "page 2 turned: code at {x}, {y}");
        } else {
            assert!(*x > 0.8 && *y < 0.08, "page {number}: code at {x}, {y}");
        }
    }

    // Ink in the answer spaces of the answered parts, none in the others.
    let answers: BTreeMap<String, BTreeMap<String, String>> =
        serde_json::from_str(&std::fs::read_to_string(example_answers()).expect("answers"))
            .expect("answers json");
    let mut answered = 0;
    for q in &layout.questions {
        for part in &q.parts {
            let given = answers
                .get(&q.question_id.to_string())
                .and_then(|a| a.get(&part.part_id))
                .is_some();
            let ink: usize = part
                .answer_space
                .iter()
                .map(|r| {
                    let i = r.page as usize - 1;
                    added_ink(&scanned[i], &clean[i], r, r.page == 2)
                })
                .sum();
            let name = format!("Q{} part {}", q.number, part.part_id);
            if given {
                answered += 1;
                assert!(
                    ink > 400,
                    "{name}: answered, but only {ink} ink pixels added"
                );
            } else {
                assert!(ink < 20, "{name}: blank, but {ink} ink pixels added");
            }
            // The writing stays in the answer space: nothing is added over the part's text.
            let over_text: usize = part
                .prompt
                .iter()
                .map(|r| {
                    let i = r.page as usize - 1;
                    added_ink(&scanned[i], &clean[i], r, r.page == 2)
                })
                .sum();
            assert!(
                over_text < 20,
                "{name}: {over_text} ink pixels over the text"
            );
        }
    }
    assert_eq!(answered, 7, "the example answers seven parts");

    // The name is written on the cover's name line, nowhere over a question.
    let name = layout.name_space.expect("the layout records the name line");
    assert_eq!(name.page, 1);
    let ink = added_ink(&scanned[0], &clean[0], &name, false);
    assert!(ink > 300, "only {ink} ink pixels of the name on its line");
}

#[test]
fn photos_and_image_files_are_made_deterministically() {
    let dir = scratch("photo");
    let paper = paper(&QUESTIONS[..1]);
    let (pdf, layout_path, layout) = render(&paper, &dir);
    let answers = dir.join("answers.json");
    std::fs::write(
        &answers,
        r#"{"8a834eff-5ac7-5e3d-902e-0c7342b819d4": {"a": "fg(3) = 7", "c": "x = 5"}}"#,
    )
    .expect("write answers");
    let make = |out: &Path| {
        scanmaker(&[
            "--paper",
            pdf.to_str().expect("path"),
            "--layout",
            layout_path.to_str().expect("path"),
            "--answers",
            answers.to_str().expect("path"),
            "--out",
            out.to_str().expect("path"),
            "--photo",
            "--dpi",
            "100",
            "--seed",
            "9",
        ])
    };
    let printed = make(&dir.join("photo.png"));
    let files: Vec<PathBuf> = printed.lines().map(PathBuf::from).collect();
    let expected: Vec<PathBuf> = (1..=layout.pages.len())
        .map(|n| dir.join(format!("photo-{n}.png")))
        .collect();
    assert_eq!(files, expected, "one PNG per page");
    let first = std::fs::read(&files[1]).expect("png");
    let image = image::load_from_memory(&first).expect("a PNG").to_luma8();
    // A dark table around the page, a light page in the middle.
    let (w, h) = image.dimensions();
    let corner = image.get_pixel(2, 2).0[0];
    let middle = image.get_pixel(w / 2, h / 2).0[0];
    assert!(
        corner < 110 && middle > 150,
        "corner {corner}, middle {middle}"
    );
    make(&dir.join("photo.png"));
    assert_eq!(
        std::fs::read(&files[1]).expect("png"),
        first,
        "same seed, same bytes"
    );

    // A layout wrapped as the service returns it is accepted too.
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&layout_path).expect("layout"))
            .expect("json");
    let wrapped = dir.join("wrapped.json");
    std::fs::write(&wrapped, serde_json::json!({ "layout": value }).to_string()).expect("write");
    let jpeg = dir.join("page.jpeg");
    let printed = scanmaker(&[
        "--paper",
        pdf.to_str().expect("path"),
        "--layout",
        wrapped.to_str().expect("path"),
        "--out",
        jpeg.to_str().expect("path"),
        "--dpi",
        "60",
    ]);
    assert_eq!(printed.lines().count(), layout.pages.len());
    assert!(dir.join("page-1.jpg").exists());
}

#[test]
fn answers_for_questions_not_on_the_paper_are_refused() {
    let dir = scratch("refused");
    let paper = paper(&QUESTIONS[..1]);
    let (pdf, layout_path, _) = render(&paper, &dir);
    // The example answers name questions that this one-question paper does not have.
    let out = Command::new(env!("CARGO_BIN_EXE_examkit-scanmaker"))
        .args(["--paper", pdf.to_str().expect("path")])
        .args(["--layout", layout_path.to_str().expect("path")])
        .args(["--answers", example_answers().to_str().expect("path")])
        .args(["--out", dir.join("scan.pdf").to_str().expect("path")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains("not on this paper"), "{message}");
    assert!(!dir.join("scan.pdf").exists());
}

/// A class set scanned as a stack: every page of three named copies, some turned a quarter or
/// half round, all skewed, blurred and noisy, still reads as its copy and page.
#[test]
fn every_page_of_a_scanned_class_set_reads_as_its_copy_and_page() {
    use examkit_pdf::{ClassSetDocument, CopyCode, CopyLabel};
    let dir = scratch("class-set");
    let paper = paper(&QUESTIONS[..2]);
    let run_id = uuid::Uuid::from_u128(0x5e7c_1a55_0000_4000_8000_0000_0000_0042);
    let set = ClassSetDocument {
        run_id,
        copies: ["Ada Lovelace", "Alan Turing", "Grace Hopper"]
            .iter()
            .enumerate()
            .map(|(i, name)| CopyLabel {
                copy: i as u32 + 1,
                name: Some((*name).to_owned()),
                candidate_number: None,
            })
            .collect(),
    };
    let rendered = examkit_pdf::Renderer::new()
        .class_set(&paper, &set)
        .expect("the set renders");
    let pdf = dir.join("class-set.pdf");
    std::fs::write(&pdf, &rendered.pdf).expect("write the set");
    // The set has no answer spaces of its own to write in: a layout with no questions.
    let layout = dir.join("layout.json");
    std::fs::write(&layout, r#"{"pages": [], "questions": []}"#).expect("write layout");
    let scan = dir.join("stack.pdf");
    scanmaker(&[
        "--paper",
        pdf.to_str().expect("path"),
        "--layout",
        layout.to_str().expect("path"),
        "--out",
        scan.to_str().expect("path"),
        "--rotate",
        "2:180,5:90,7:270",
        "--skew",
        "0.5:2.5",
        "--blur",
        "0.6:0.9",
        "--noise",
        "0.03",
        "--dpi",
        "150",
        "--seed",
        "11",
    ]);
    let bytes = std::fs::read(&scan).expect("the scan");
    let mut indexer = examkit_scan::Indexer::new(&examkit_scan::IndexOptions {
        dpi: 150,
        ocr: false,
        ..examkit_scan::IndexOptions::default()
    })
    .expect("an indexer");
    assert_eq!(rendered.pages, 3 * rendered.pages_per_copy as usize);
    for at in 1..=rendered.pages as u32 {
        let index = indexer
            .index_page(&bytes, examkit_scan::Format::Pdf, at)
            .expect("the page indexes");
        let read: Vec<CopyCode> = index
            .codes
            .iter()
            .filter_map(|c| CopyCode::parse(&c.payload))
            .collect();
        let expected = CopyCode {
            run_id,
            copy: (at - 1) / rendered.pages_per_copy + 1,
            page: (at - 1) % rendered.pages_per_copy + 1,
        };
        assert_eq!(read, [expected], "stack page {at}");
    }
}
