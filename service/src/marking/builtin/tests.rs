//! The built-in marker's decision for one criterion ([`decide`]) and its whole answer ([`mark`])
//! on hand-built pages: words with boxes, ink added to the clean page, the parts' answer spaces.

use super::*;
use crate::marking::marker::{AnswerRegion, SchemePage};

const WORK: &str = "5b0f6a2e-8c1d-4e7a-9b3f-2d4c6e8f0a11";
const SCHEME: &str = "c7e2d9b4-1a3f-4c5e-8d7b-9f0e1a2b3c44";

fn rect(x: f64, y: f64, width: f64, height: f64) -> Rect {
    Rect {
        x,
        y,
        width,
        height,
    }
}

fn close(a: Rect, b: Rect) -> bool {
    (a.x - b.x).abs() < 1e-9
        && (a.y - b.y).abs() < 1e-9
        && (a.width - b.width).abs() < 1e-9
        && (a.height - b.height).abs() < 1e-9
}

/// Part a's answer space on page 1.
const SPACE_A: Rect = Rect {
    x: 0.05,
    y: 0.4,
    width: 0.9,
    height: 0.3,
};

/// Part b's answer space on page 1, below part a's.
const SPACE_B: Rect = Rect {
    x: 0.05,
    y: 0.8,
    width: 0.9,
    height: 0.15,
};

fn word(text: &str, bbox: Rect) -> PageWord {
    PageWord {
        text: text.into(),
        bbox,
        confidence: 0.8,
    }
}

/// Words written on one line from (x, y), each 0.03 wide and 0.04 high, 0.05 apart.
fn line(x: f64, y: f64, text: &str) -> Vec<PageWord> {
    text.split_whitespace()
        .enumerate()
        .map(|(i, t)| word(t, rect(x + 0.05 * i as f64, y, 0.03, 0.04)))
        .collect()
}

/// The box holding `line(x, y, text)` for `n` words.
fn line_box(x: f64, y: f64, n: usize) -> Rect {
    rect(x, y, 0.05 * (n - 1) as f64 + 0.03, 0.04)
}

/// Page `n` of the student's script, with `words`, compared with the clean page (`ink`).
fn page(n: u32, words: Vec<PageWord>, ink: Option<Vec<Rect>>) -> WorkPage {
    WorkPage {
        page_id: format!("{WORK}:p{n}"),
        asset_id: WORK.into(),
        page: n,
        width_px: 800,
        height_px: 1100,
        orientation: 0,
        evidence: true,
        blank: false,
        flagged: None,
        words,
        ink,
        ink_lines: Vec::new(),
        fit: None,
        unaligned: None,
        laid_out: true,
        answer_regions: vec![
            AnswerRegion {
                part_id: "a".into(),
                rect: SPACE_A,
            },
            AnswerRegion {
                part_id: "b".into(),
                rect: SPACE_B,
            },
        ],
        image: None,
    }
}

/// Page `n` compared with its clean page, `words` read on ink the student added.
fn written(n: u32, words: Vec<PageWord>) -> WorkPage {
    let ink = words.iter().map(|w| w.bbox).collect();
    page(n, words, Some(ink))
}

/// A page of the script to which nothing was added.
fn blank_page(n: u32) -> WorkPage {
    let mut p = page(n, Vec::new(), Some(Vec::new()));
    p.evidence = false;
    p.blank = true;
    p.flagged = Some("nothing was written on this page of the script".into());
    p
}

fn criterion(code: &str, answers: &[&str], notes: &[&str], conditions: &[&str]) -> Value {
    json!({
        "id": format!("q1-{code}"),
        "partId": "a",
        "code": code,
        "requirement": "x = 3",
        "conditions": conditions,
        "dependsOn": [],
        "sourcePageIds": [format!("{SCHEME}:p1")],
        "answers": answers,
        "notes": notes,
    })
}

/// The final-answer mark of part a: `x = 3`.
fn a1() -> Value {
    criterion("A1", &["x = 3"], &["cao"], &[])
}

fn on(page: &WorkPage) -> Vec<Place<'_>> {
    vec![Place {
        page,
        rect: SPACE_A,
    }]
}

fn quote(decision: &Value) -> &str {
    decision["evidence"][0]["quote"].as_str().unwrap_or("")
}

fn reason(decision: &Value) -> &str {
    decision["reason"].as_str().unwrap_or("")
}

fn box_of(decision: &Value) -> Rect {
    let b = &decision["evidence"][0]["box"];
    let f = |k: &str| b[k].as_f64().expect("a number");
    rect(f("x"), f("y"), f("width"), f("height"))
}

#[test]
fn an_accepted_answer_in_the_answer_space_is_awarded_on_its_words() {
    let mut words = line(0.1, 0.42, "Solve 2x = 6");
    words.extend(line(0.2, 0.5, "x = 3"));
    let p = page(1, words, Some(vec![rect(0.1, 0.42, 0.3, 0.12)]));
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["criterionId"], "q1-A1");
    assert_eq!(d["outcome"], "awarded", "{d}");
    assert_eq!(quote(&d), "x = 3");
    assert_eq!(d["evidence"][0]["pageId"], p.page_id);
    assert_eq!(d["evidence"].as_array().map(Vec::len), Some(1));
    // The box is on the words of the answer, not on the working above it nor the whole space.
    assert!(close(box_of(&d), line_box(0.2, 0.5, 3)), "{d}");
    assert!(
        reason(&d).contains("the accepted answer x = 3 is written in the answer space of part a, as written in the scheme"),
        "{d}"
    );
    assert_eq!(d["conditionChecks"], json!([]));
}

#[test]
fn an_answer_equal_in_value_is_awarded_saying_so() {
    let p = written(1, line(0.2, 0.5, "x = 0.75"));
    let criterion = criterion("A1", &["x = 3/4"], &[], &[]);
    let d = decide(&criterion, &on(&p), &p);
    assert_eq!(d["outcome"], "awarded", "{d}");
    assert_eq!(quote(&d), "x = 0.75");
    assert!(reason(&d).contains("in an equal numerical form"), "{d}");
}

#[test]
fn a_wrong_answer_is_uncertain_quoting_what_is_written() {
    // The rule: only a found accepted answer is awarded; a written answer that is not one may be
    // an equivalent form the matcher cannot prove, so a person reads it. Nothing is withheld on
    // a non-blank answer space.
    let p = page(
        1,
        line(0.2, 0.5, "x = 4"),
        Some(vec![line_box(0.2, 0.5, 3)]),
    );
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert_eq!(quote(&d), "x = 4");
    assert!(close(box_of(&d), SPACE_A), "{d}");
    assert!(
        reason(&d).contains("no accepted answer of part a was found"),
        "{d}"
    );
}

#[test]
fn a_long_wrong_answer_is_quoted_by_its_first_twelve_words() {
    let text = "a b c d e f g h i j k l m n";
    let p = written(1, line(0.06, 0.5, text));
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert_eq!(quote(&d), "a b c d e f g h i j k l …");
}

#[test]
fn an_empty_answer_space_is_withheld_as_blank() {
    // No words, and the comparison with the clean page shows no ink there.
    let p = page(1, Vec::new(), Some(Vec::new()));
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "withheld", "{d}");
    assert_eq!(quote(&d), BLANK_QUOTE);
    assert!(close(box_of(&d), SPACE_A), "{d}");
    assert_eq!(d["evidence"][0]["pageId"], p.page_id);
    assert_eq!(reason(&d), "the answer space of part a is blank");
}

#[test]
fn printed_words_a_skewed_space_takes_in_are_never_the_answer() {
    // A skewed scan: the answer space carried onto it takes in the part's printed mark and the
    // question's words, read from the clean page's text layer. Nothing was added there.
    let mut print = line(0.85, 0.41, "(2)");
    print.extend(line(0.06, 0.42, "Find P(3 < X ≤ 8)."));
    let p = page(1, print.clone(), Some(Vec::new()));
    for criterion in [a1(), criterion("M1", &[], &[], &[])] {
        let d = decide(&criterion, &on(&p), &p);
        assert_eq!(d["outcome"], "withheld", "{d}");
        assert_eq!(quote(&d), BLANK_QUOTE);
        assert_eq!(reason(&d), "the answer space of part a is blank");
    }

    // The student wrote a wrong answer beside the print: only the writing is quoted.
    let mut words = print;
    words.extend(line(0.3, 0.55, "x = 4"));
    let p = page(1, words, Some(vec![line_box(0.3, 0.55, 3)]));
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert_eq!(quote(&d), "x = 4");
    // And an accepted answer the print happens to hold ("8") is not found in the print.
    let mut words = line(0.06, 0.42, "Find P(3 < X ≤ 8).");
    words.extend(line(0.3, 0.55, "x = 5"));
    let p = page(1, words, Some(vec![line_box(0.3, 0.55, 3)]));
    let d = decide(&criterion("B1", &["8"], &[], &[]), &on(&p), &p);
    assert_ne!(d["outcome"], "awarded", "{d}");
    assert_eq!(quote(&d), "x = 5");
}

#[test]
fn specks_and_dotted_lines_read_in_an_answer_space_are_not_writing() {
    let p = page(
        1,
        vec![
            word("........", rect(0.1, 0.6, 0.5, 0.02)),
            word("_", rect(0.7, 0.6, 0.02, 0.02)),
            word("'", rect(0.3, 0.5, 0.01, 0.01)),
        ],
        Some(Vec::new()),
    );
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "withheld", "{d}");
    assert_eq!(quote(&d), BLANK_QUOTE);
}

#[test]
fn ink_without_readable_words_is_uncertain_and_located_on_the_ink() {
    let ink = rect(0.3, 0.5, 0.2, 0.1);
    // Ink elsewhere on the page (part b's space) is not part a's.
    let p = page(1, Vec::new(), Some(vec![ink, rect(0.3, 0.85, 0.2, 0.05)]));
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert_eq!(quote(&d), UNREAD_QUOTE);
    assert!(close(box_of(&d), ink), "{d}");
    assert!(reason(&d).contains("no words could be read there"), "{d}");
}

#[test]
fn the_unread_box_holds_every_stroke_mostly_inside_the_answer_space() {
    let left = rect(0.1, 0.45, 0.1, 0.05);
    let right = rect(0.6, 0.6, 0.1, 0.05);
    // Mostly above the space (a third of it inside): not counted.
    let above = rect(0.4, 0.35, 0.1, 0.075);
    let p = page(1, Vec::new(), Some(vec![left, right, above]));
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert!(close(box_of(&d), rect(0.1, 0.45, 0.6, 0.2)), "{d}");

    // Only that stroke: the space is blank.
    let p = page(1, Vec::new(), Some(vec![above]));
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "withheld", "{d}");
}

#[test]
fn without_a_comparison_an_empty_answer_space_is_uncertain() {
    // No words read and no clean page to compare with: it cannot be told blank.
    let p = page(1, Vec::new(), None);
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert_eq!(quote(&d), UNREAD_QUOTE);
    assert!(close(box_of(&d), SPACE_A), "{d}");
    assert!(reason(&d).contains("could not be compared"), "{d}");
}

#[test]
fn a_method_mark_is_left_to_a_person() {
    let p = written(1, line(0.2, 0.5, "2x = 6"));
    for code in ["M1", "dM1"] {
        let d = decide(&criterion(code, &[], &[], &[]), &on(&p), &p);
        assert_eq!(d["outcome"], "uncertain", "{code}: {d}");
        assert!(reason(&d).starts_with("a method mark:"), "{code}: {d}");
        assert_eq!(quote(&d), "2x = 6");
        assert!(close(box_of(&d), SPACE_A), "{d}");
    }
    // A mark with no accepted answers that is not a method mark.
    let d = decide(&criterion("B1", &[], &[], &[]), &on(&p), &p);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert!(
        reason(&d).starts_with("a mark without a single final answer:"),
        "{d}"
    );
}

#[test]
fn a_method_mark_on_a_blank_answer_space_is_withheld() {
    let p = page(1, Vec::new(), Some(Vec::new()));
    let d = decide(&criterion("M1", &[], &[], &[]), &on(&p), &p);
    assert_eq!(d["outcome"], "withheld", "{d}");
    assert_eq!(quote(&d), BLANK_QUOTE);
}

#[test]
fn words_outside_the_answer_space_are_not_counted() {
    // The right answer written in part b's space, part a's left empty.
    let p = written(1, line(0.2, 0.85, "x = 3"));
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "withheld", "{d}");
    assert_eq!(quote(&d), BLANK_QUOTE);

    // A wrong answer in part a's space, the right one outside it: not awarded, and only what is
    // inside is quoted.
    let mut words = line(0.2, 0.5, "x = 4");
    words.extend(line(0.2, 0.85, "x = 3"));
    let p = written(1, words);
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert_eq!(quote(&d), "x = 4");

    // A word counts where its centre is: one straddling the space's lower edge, its centre
    // below it, is outside.
    let p = written(1, vec![word("7", rect(0.5, 0.69, 0.03, 0.04))]);
    let d = decide(&criterion("B1", &["7"], &[], &[]), &on(&p), &p);
    assert_eq!(d["outcome"], "withheld", "{d}");
}

#[test]
fn a_part_without_an_answer_space_is_uncertain_on_the_first_page() {
    let p = written(1, line(0.2, 0.5, "x = 3"));
    let d = decide(&a1(), &[], &p);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert_eq!(d["evidence"][0]["pageId"], p.page_id);
    assert!(close(box_of(&d), rect(0.0, 0.0, 1.0, 1.0)), "{d}");
    assert_eq!(
        quote(&d),
        "the answer space of this part was not found on this page"
    );
    assert!(reason(&d).contains("part a was not found"), "{d}");
}

#[test]
fn conditions_are_never_judged() {
    let p = written(1, line(0.2, 0.5, "x = 3"));
    let criterion = criterion("A1", &["x = 3"], &[], &["exact form", "units"]);
    let d = decide(&criterion, &on(&p), &p);
    assert_eq!(d["outcome"], "awarded", "{d}");
    let checks = d["conditionChecks"].as_array().expect("checks");
    assert_eq!(checks.len(), 2);
    for (i, check) in checks.iter().enumerate() {
        assert_eq!(check["index"], i);
        assert_eq!(check["result"], "uncertain");
    }
}

#[test]
fn an_answer_read_on_a_blank_page_of_the_script_is_never_awarded() {
    // Words read where nothing was added are the page's print: the space is blank.
    let mut p = blank_page(2);
    p.words = line(0.2, 0.5, "x = 3");
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "withheld", "{d}");
    assert_eq!(quote(&d), BLANK_QUOTE);
    // Written on ink the comparison found, on a page that is no evidence: a person reads it.
    p.ink = Some(vec![line_box(0.2, 0.5, 3)]);
    let d = decide(&a1(), &on(&p), &p);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert_eq!(d["evidence"][0]["pageId"], p.page_id);
}

#[test]
fn the_answer_is_looked_for_in_every_place_of_the_part() {
    // The part's space starts on a blank page and goes on on the student's page, where the
    // answer is.
    let blank = blank_page(2);
    let written_page = written(1, line(0.2, 0.5, "x = 3"));
    let places = [
        Place {
            page: &blank,
            rect: SPACE_A,
        },
        Place {
            page: &written_page,
            rect: SPACE_A,
        },
    ];
    let d = decide(&a1(), &places, &blank);
    assert_eq!(d["outcome"], "awarded", "{d}");
    assert_eq!(d["evidence"][0]["pageId"], written_page.page_id);

    // Blank in every place: withheld, located on the first.
    let empty = page(1, Vec::new(), Some(Vec::new()));
    let places = [
        Place {
            page: &blank,
            rect: SPACE_A,
        },
        Place {
            page: &empty,
            rect: SPACE_B,
        },
    ];
    let d = decide(&a1(), &places, &empty);
    assert_eq!(d["outcome"], "withheld", "{d}");
    assert_eq!(d["evidence"][0]["pageId"], blank.page_id);
    assert_eq!(quote(&d), BLANK_QUOTE);

    // Blank in one place and not comparable in the other: it cannot be told blank.
    let unknown = page(1, Vec::new(), None);
    let places = [
        Place {
            page: &blank,
            rect: SPACE_A,
        },
        Place {
            page: &unknown,
            rect: SPACE_A,
        },
    ];
    let d = decide(&a1(), &places, &blank);
    assert_eq!(d["outcome"], "uncertain", "{d}");
    assert_eq!(d["evidence"][0]["pageId"], unknown.page_id);
    assert_eq!(quote(&d), UNREAD_QUOTE);
}

#[test]
fn on_a_page_scanned_sideways_the_answer_is_read_upright() {
    // "x = 4" corrected to "x = 3" on the next line, written upright, the page's content turned
    // a quarter clockwise: as displayed, the lines run down the page side by side. Read upright,
    // the student's last statement is x = 3; read as displayed, the words would interleave.
    let mut upright = line(0.2, 0.45, "x = 4");
    upright.extend(line(0.2, 0.52, "x = 3"));
    let mut p = page(1, Vec::new(), Some(Vec::new()));
    p.orientation = 90;
    p.words = upright
        .iter()
        .map(|w| word(&w.text, turned(w.bbox, 90)))
        .collect();
    p.ink = Some(p.words.iter().map(|w| w.bbox).collect());
    let space = turned(SPACE_A, 90);
    let places = [Place {
        page: &p,
        rect: space,
    }];
    let d = decide(&a1(), &places, &p);
    assert_eq!(d["outcome"], "awarded", "{d}");
    assert_eq!(quote(&d), "x = 3");
    // The box is where the second line's words are displayed.
    assert!(close(box_of(&d), turned(line_box(0.2, 0.52, 3), 90)), "{d}");
}

/// The structured scheme of question 1: a method mark and an answer mark in part a, a mark with
/// a condition in part b.
fn scheme() -> Scheme {
    let s1 = format!("{SCHEME}:p1");
    Scheme::Structured {
        parts: json!([{ "id": "a", "maxMarks": 2 }, { "id": "b", "maxMarks": 1 }]),
        criteria: json!([
            { "id": "q1-M1", "partId": "a", "code": "M1", "requirement": "Sets up a correct equation",
              "conditions": [], "dependsOn": [], "sourcePageIds": [s1], "answers": [], "notes": [] },
            { "id": "q1-A1", "partId": "a", "code": "A1", "requirement": "x = 3",
              "conditions": [], "dependsOn": ["q1-M1"], "sourcePageIds": [s1],
              "answers": ["x = 3"], "notes": ["cao"] },
            { "id": "q1-B1", "partId": "b", "code": "B1", "requirement": "States the range",
              "conditions": ["Uses strict inequalities"], "conditionMode": "all",
              "dependsOn": [], "sourcePageIds": [s1], "answers": ["x > 2"], "notes": [] },
        ]),
    }
}

/// Page 1: "2x = 6" then "x = 3" in part a's space, part b's space empty; page 2: a blank page
/// of the script holding the rest of part b's space; page 3: the clean question paper.
fn request(scheme: Scheme) -> MarkRequest {
    let mut words = line(0.2, 0.42, "2x = 6");
    words.extend(line(0.2, 0.5, "x = 3"));
    let one = page(1, words, Some(vec![rect(0.2, 0.42, 0.15, 0.12)]));
    let mut two = blank_page(2);
    two.answer_regions = vec![AnswerRegion {
        part_id: "b".into(),
        rect: rect(0.05, 0.1, 0.9, 0.3),
    }];
    let mut three = page(3, line(0.2, 0.85, "x > 2"), None);
    three.evidence = false;
    three.flagged = Some("the page is the clean question paper".into());
    let mut selections = serde_json::Map::new();
    selections.insert(WORK.into(), json!([1, 2, 3]));
    selections.insert(SCHEME.into(), json!([1]));
    MarkRequest {
        question_id: "q".into(),
        session_id: "s".into(),
        label: "1".into(),
        scheme,
        work_pages: vec![one, two, three],
        scheme_pages: vec![SchemePage {
            page_id: format!("{SCHEME}:p1"),
            asset_id: SCHEME.into(),
            page: 1,
            width_px: 800,
            height_px: 1100,
            image: None,
        }],
        page_selections: selections,
        assets: json!([]),
    }
}

fn engine_assets() -> Vec<examkit_engine::Asset> {
    let id = |s: &str| uuid::Uuid::parse_str(s).expect("uuid");
    vec![
        examkit_engine::Asset {
            id: id(WORK),
            kind: examkit_engine::AssetKind::Work,
            page_count: 3,
        },
        examkit_engine::Asset {
            id: id(SCHEME),
            kind: examkit_engine::AssetKind::Scheme,
            page_count: 1,
        },
    ]
}

fn decision_of<'a>(question: &'a Value, id: &str) -> &'a Value {
    question["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .find(|d| d["criterionId"] == id)
        .expect("a decision")
}

#[test]
fn a_structured_question_is_marked_criterion_by_criterion_and_passes_the_check() {
    let request = request(scheme());
    let marked = mark(&request).expect("marked");
    let q = &marked.question;
    assert_eq!(q["label"], "1");
    assert_eq!(
        q["pageSelections"],
        Value::Object(request.page_selections.clone())
    );
    let ids: Vec<&str> = q["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .filter_map(|d| d["criterionId"].as_str())
        .collect();
    assert_eq!(ids, ["q1-M1", "q1-A1", "q1-B1"]);
    assert_eq!(decision_of(q, "q1-M1")["outcome"], "uncertain");
    let a1 = decision_of(q, "q1-A1");
    assert_eq!(a1["outcome"], "awarded", "{a1}");
    assert_eq!(quote(a1), "x = 3");
    // Part b: empty on page 1 and on the blank page 2; the clean paper's printed words are not
    // looked at.
    let b1 = decision_of(q, "q1-B1");
    assert_eq!(b1["outcome"], "withheld", "{b1}");
    assert_eq!(quote(b1), BLANK_QUOTE);
    assert_eq!(b1["evidence"][0]["pageId"], format!("{WORK}:p1"));
    assert!(close(box_of(b1), SPACE_B), "{b1}");
    // The rubric is the scheme's, and the answer passes the service's check and the engine.
    assert_eq!(crate::marking::questions::check_answer(&request, q), Ok(()));
    let assets = engine_assets();
    let check = crate::marking::questions::answer_check(&request, &assets, "builtin");
    assert_eq!(check(q), Ok(()));
}

#[test]
fn a_scheme_of_pages_is_one_uncertain_decision_for_a_person() {
    let request = request(Scheme::Pages);
    let marked = mark(&request).expect("marked");
    let q = &marked.question;
    let decisions = q["decisions"].as_array().expect("decisions");
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0]["criterionId"], WHOLE_QUESTION);
    assert_eq!(decisions[0]["outcome"], "uncertain");
    assert_eq!(decisions[0]["evidence"][0]["pageId"], format!("{WORK}:p1"));
    assert_eq!(
        q["rubric"]["criteria"][0]["sourcePageIds"],
        json!([format!("{SCHEME}:p1")])
    );
    let assets = engine_assets();
    let check = crate::marking::questions::answer_check(&request, &assets, "builtin");
    assert_eq!(check(q), Ok(()));
}

#[test]
fn without_a_students_page_nothing_is_marked() {
    let mut request = request(scheme());
    for p in &mut request.work_pages {
        p.evidence = false;
        p.blank = false;
    }
    let error = mark(&request).expect_err("no evidence pages");
    assert_eq!(error.code, "no_evidence_pages");
    assert!(!error.retry);
}

#[test]
fn a_malformed_structured_scheme_is_refused() {
    let request = request(Scheme::Structured {
        parts: json!({ "a": 2 }),
        criteria: json!([]),
    });
    let error = mark(&request).expect_err("malformed");
    assert_eq!(error.code, "scheme_unreadable");
    assert!(
        error.message.contains("parts is not a list"),
        "{}",
        error.message
    );
    assert!(!error.retry);
}
