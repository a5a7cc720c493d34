//! The results of a small class counted by hand (`tests/fixtures/results/`): the markbook's
//! sheets, and the item analysis against the hand count.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::analysis::analyse;
use super::class::{ClassResults, QuestionColumn, Script, Standing, StudentResult};
use super::markbook::{self, Cell};
use super::{csv, download::Download};
use crate::marked::MarkedQuestion;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FixtureClass {
    title: String,
    questions: Vec<FixtureQuestion>,
    students: Vec<FixtureStudent>,
}

#[derive(Deserialize)]
struct FixtureQuestion {
    label: String,
    max: i64,
    criteria: Vec<(String, String, String)>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FixtureStudent {
    student: String,
    candidate_number: Option<String>,
    copy: u32,
    #[serde(default)]
    absent: bool,
    #[serde(default)]
    questions: Vec<String>,
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(name);
    std::fs::read_to_string(path).expect("a fixture")
}

/// The hand-counted class.
fn class() -> ClassResults {
    let fixture: FixtureClass = serde_json::from_str(&fixture("class.json")).expect("the class");
    let questions = fixture
        .questions
        .iter()
        .map(|q| {
            QuestionColumn::new(
                &q.label,
                q.max,
                q.criteria
                    .iter()
                    .map(|(id, part, code)| (id.as_str(), part.as_str(), code.as_str())),
            )
        })
        .collect();
    let students = fixture
        .students
        .iter()
        .map(|s| {
            let standing = if s.absent {
                Standing::Absent
            } else {
                let questions: Vec<MarkedQuestion> = s
                    .questions
                    .iter()
                    .map(|name| {
                        let path =
                            crate::marked::tests::fixtures().join(format!("{name}.row.json"));
                        let (row, kinds) = crate::marked::tests::load(&path);
                        MarkedQuestion::from_row(&row, &kinds).expect("a marked question")
                    })
                    .collect();
                Standing::Script(Box::new(Script {
                    session_id: format!("session-of-{}", s.copy),
                    session_marker: None,
                    questions,
                    reviews: Default::default(),
                }))
            };
            StudentResult {
                student: Some(s.student.clone()),
                candidate_number: s.candidate_number.clone(),
                copy: Some(s.copy),
                standing,
            }
        })
        .collect();
    ClassResults {
        paper_title: fixture.title.clone(),
        title: fixture.title,
        questions,
        students,
    }
}

#[test]
fn the_analysis_is_the_hand_count() {
    let class = class();
    let analysis = analyse(&class);
    let expected: Value = serde_json::from_str(&fixture("analysis.json")).expect("JSON");
    assert_eq!(analysis.scripts, 5);
    let questions = serde_json::to_value(&analysis.questions).expect("JSON");
    assert_eq!(questions, expected["questions"]);
    let counts: BTreeMap<String, [usize; 4]> = analysis
        .criteria
        .iter()
        .map(|c| (c.id.clone(), [c.marked, c.awarded, c.withheld, c.uncertain]))
        .collect();
    let expected_counts: BTreeMap<String, [usize; 4]> =
        serde_json::from_value(expected["criteria"].clone()).expect("counts");
    assert_eq!(counts, expected_counts);
    let lost: Vec<&str> = analysis
        .most_lost(3)
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    let expected_lost: Vec<String> =
        serde_json::from_value(expected["mostLost"].clone()).expect("most lost");
    assert_eq!(lost, expected_lost);
    for c in analysis.most_lost(3) {
        let by: Vec<&str> = c
            .lost_by
            .iter()
            .filter_map(|l| l.student.as_deref())
            .collect();
        assert_eq!(
            by,
            expected["lostBy"][&c.id]
                .as_array()
                .expect("names")
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
        );
        assert!(
            c.lost_by
                .iter()
                .all(|l| l.session_id.starts_with("session-of-"))
        );
    }
    // Shares follow the counts.
    let b1 = analysis
        .criteria
        .iter()
        .find(|c| c.id == "q3a-b1")
        .expect("criterion");
    assert_eq!(b1.awarded_share, Some(0.5));
    assert_eq!(b1.name, "Q3a B1");
    let a1 = analysis
        .criteria
        .iter()
        .find(|c| c.id == "b3")
        .expect("criterion");
    assert_eq!(a1.name, "Q2b A1 (b3)");
}

#[test]
fn the_marks_sheet_says_what_each_question_stands_at() {
    let sheet = markbook::marks(&class());
    let text = |cell: &Cell| csv::cell_text(cell);
    let rows: Vec<Vec<String>> = sheet
        .rows
        .iter()
        .map(|r| r.iter().map(text).collect())
        .collect();
    assert_eq!(
        sheet.header,
        [
            "Student",
            "Candidate number",
            "Copy",
            "Q2",
            "Q3",
            "Total",
            "Percentage",
            "Status"
        ]
    );
    let expected: Vec<Vec<&str>> = vec![
        vec!["Maximum", "", "", "6", "4", "10", "100", ""],
        vec![
            "'=HYPERLINK(\"http://example.invalid\",\"Ann\")",
            "0001",
            "1",
            "6",
            "4",
            "10",
            "100",
            "marked",
        ],
        vec![
            "Ben",
            "'+0002",
            "2",
            "0–6",
            "1–1",
            "1–7",
            "10–70",
            "marked; needs review: Q2, Q3",
        ],
        vec![
            "'@Cat",
            "",
            "3",
            "not scanned",
            "2–3",
            "2–9",
            "20–90",
            "marked; needs review: Q3; not scanned: Q2",
        ],
        vec![
            "'-Dan",
            "",
            "4",
            "6",
            "2–4",
            "8–10",
            "80–100",
            "marked; needs review: Q3",
        ],
        vec!["Eve", "", "5", "ABS", "ABS", "ABS", "", "absent"],
        vec!["Fay", "", "6", "", "", "", "", "marking"],
    ];
    assert_eq!(rows, expected);
    // Numbers are numbers, ranges and names text.
    assert_eq!(sheet.rows[1][3], Cell::Int(6));
    assert_eq!(sheet.rows[1][6], Cell::Decimal(100.0));
    assert!(matches!(sheet.rows[2][3], Cell::Text(_)));
}

#[test]
fn a_question_left_blank_is_zero_and_said_so() {
    let mut class = class();
    let path = crate::marked::tests::fixtures().join("completed-automated-built-in.row.json");
    let (row, kinds) = crate::marked::tests::load(&path);
    let blank = MarkedQuestion::from_row(&row, &kinds).expect("a marked question");
    assert!(
        blank.left_blank(),
        "every criterion withheld on a blank answer space"
    );
    let Standing::Script(script) = &mut class.students[0].standing else {
        panic!("Ann has a script");
    };
    // Ann's question 3 is the built-in marker's blank one.
    script.questions[1] = blank;
    let sheet = markbook::marks(&class);
    assert_eq!(sheet.rows[1][4], Cell::Int(0));
    assert_eq!(sheet.rows[1][7], Cell::Text("marked; blank: Q3".into()));
    // A question with an award is not blank, nor one with no decision.
    let ink = &class.students[3].standing;
    let Standing::Script(dan) = ink else {
        panic!("Dan has a script")
    };
    assert!(!dan.questions[0].left_blank());
    let Standing::Script(cat) = &class.students[2].standing else {
        panic!("Cat has a script")
    };
    assert!(
        !cat.questions[0].left_blank(),
        "a page not scanned is not a blank answer"
    );
}

#[test]
fn the_criteria_and_decisions_sheets_give_every_criterion() {
    let class = class();
    let criteria = markbook::criteria(&class);
    assert_eq!(criteria.header.len(), 3 + 6 + 4);
    assert_eq!(criteria.header[3], "Q2a M1");
    assert_eq!(criteria.header[8], "Q2b A1 (b4)");
    let ben = &criteria.rows[1];
    assert_eq!(ben[3], Cell::Text("uncertain".into()));
    assert_eq!(ben[9], Cell::Text("withheld".into()));
    assert_eq!(criteria.rows[4][3], Cell::Text("ABS".into()));
    // Cat's question 2 is on a page never scanned: each of its criteria says so.
    for cell in &criteria.rows[2][3..9] {
        assert_eq!(cell, &Cell::Text("not scanned".into()));
    }
    assert_eq!(criteria.rows[2][9], Cell::Text("withheld".into()));
    assert_eq!(
        criteria.rows[5][3],
        Cell::Empty,
        "Fay's question 2 is not marked"
    );
    let decisions = markbook::decisions(&class);
    // Ann 6 + 4, Ben 6 + 4, Cat 0 + 4, Dan 6 + 4: one row per decision of a marked question.
    assert_eq!(decisions.rows.len(), 34);
    let row = &decisions.rows[0];
    assert_eq!(row[3], Cell::Text("Q2".into()));
    assert_eq!(row[6], Cell::Text("Q2a M1".into()));
    assert_eq!(row[7], Cell::Text("awarded".into()));
    assert_eq!(row[9], Cell::Int(1));
    assert_eq!(row[11], Cell::Text("ai".into()));
    assert!(matches!(&row[10], Cell::Text(name) if !name.is_empty()));
}

#[test]
fn the_workbook_holds_the_three_sheets_as_written() {
    use calamine::{Data, Reader, Xlsx};
    let class = class();
    let file = Download::MarkbookXlsx.write(&class).expect("written");
    let mut book: Xlsx<_> =
        calamine::open_workbook_from_rs(std::io::Cursor::new(file.bytes)).expect("an XLSX");
    assert_eq!(book.sheet_names(), ["Marks", "Criteria", "Analysis"]);
    let marks = markbook::marks(&class);
    let range = book.worksheet_range("Marks").expect("marks");
    for (r, row) in marks.rows.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            let read = range.get((r + 1, c)).cloned().unwrap_or(Data::Empty);
            let expected = match cell {
                Cell::Empty => Data::Empty,
                Cell::Int(n) => Data::Float(*n as f64),
                Cell::Decimal(x) => Data::Float(*x),
                Cell::Text(t) => Data::String(t.clone()),
            };
            assert_eq!(read, expected, "row {r} column {c}");
        }
    }
    for sheet in ["Marks", "Criteria", "Analysis"] {
        let formulas = book.worksheet_formula(sheet).expect("formulas");
        assert!(
            formulas.used_cells().all(|(_, _, f)| f.is_empty()),
            "{sheet} holds no formula"
        );
    }
}
