//! Sheets as CSV (RFC 4180, UTF-8 with a byte-order mark so that spreadsheets read the names'
//! accents). Every text cell is quoted, so that a spreadsheet reads it as text (a candidate
//! number keeps its leading zeros, a name is never split at a separator); numbers are not. A
//! text a spreadsheet would read as a formula is written with a leading `'`, and so is every
//! part of it after a `;` that would start one: a spreadsheet that splits cells at `;` sees no
//! formula either.

use super::markbook::{Cell, Sheet};

/// Whether a spreadsheet would read `text` as a formula (or a command): it starts with `=`,
/// `+`, `-`, `@`, a tab or a carriage return.
pub fn reads_as_formula(text: &str) -> bool {
    text.starts_with(['=', '+', '-', '@', '\t', '\r'])
}

/// The text a cell is written as, before quoting.
pub fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Empty => String::new(),
        Cell::Int(n) => n.to_string(),
        Cell::Decimal(x) => format!("{x}"),
        Cell::Text(t) => neutralised(t),
    }
}

/// `text` with a `'` before it when it would be read as a formula, and after every `;` that is
/// followed by what would start one.
pub fn neutralised(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    if reads_as_formula(text) {
        out.push('\'');
    }
    let mut rest = text;
    while let Some(at) = rest.find(';') {
        let (before, after) = rest.split_at(at + 1);
        out.push_str(before);
        if reads_as_formula(after) {
            out.push('\'');
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A cell as a field of a record: a text quoted (its quotes doubled), a number as it is.
fn field(cell: &Cell) -> String {
    match cell {
        Cell::Text(_) => format!("\"{}\"", cell_text(cell).replace('"', "\"\"")),
        other => cell_text(other),
    }
}

/// The sheet as CSV.
pub fn write(sheet: &Sheet) -> Result<Vec<u8>, std::io::Error> {
    let mut out = String::with_capacity(64 * (sheet.rows.len() + 1));
    out.push('\u{feff}');
    let header = sheet.header.iter().map(|h| Cell::Text(h.clone()));
    let mut record = |cells: &mut dyn Iterator<Item = Cell>| {
        let fields: Vec<String> = cells.map(|c| field(&c)).collect();
        out.push_str(&fields.join(","));
        out.push_str("\r\n");
    };
    record(&mut header.into_iter());
    for row in &sheet.rows {
        record(&mut row.iter().cloned());
    }
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_read_as_a_formula_is_written_as_text() {
        for text in ["=HYPERLINK(\"x\")", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx"] {
            assert!(reads_as_formula(text), "{text:?}");
            assert_eq!(cell_text(&Cell::Text(text.into())), format!("'{text}"));
        }
        for text in ["Ada", "3–5", "ABS", " =x", "a=b", "a; b", "x;"] {
            assert!(!reads_as_formula(text), "{text:?}");
            assert_eq!(cell_text(&Cell::Text(text.into())), text);
        }
        assert_eq!(
            cell_text(&Cell::Text("Ann;=HYPERLINK(\"x\");-1;ok".into())),
            "Ann;'=HYPERLINK(\"x\");'-1;ok"
        );
        assert_eq!(cell_text(&Cell::Text("=a;@b".into())), "'=a;'@b");
        assert_eq!(cell_text(&Cell::Int(-3)), "-3");
        assert_eq!(cell_text(&Cell::Decimal(62.5)), "62.5");
    }

    #[test]
    fn a_sheet_quotes_every_text_as_rfc_4180_says() {
        let sheet = Sheet {
            name: "Marks",
            header: vec!["Student".into(), "Q1".into()],
            rows: vec![
                vec![Cell::Text("Lovelace, \"Ada\"".into()), Cell::Int(3)],
                vec![Cell::Text("=1+1".into()), Cell::Empty],
            ],
        };
        let text = String::from_utf8(write(&sheet).expect("written")).expect("UTF-8");
        assert_eq!(
            text,
            "\u{feff}\"Student\",\"Q1\"\r\n\"Lovelace, \"\"Ada\"\"\",3\r\n\"'=1+1\",\r\n"
        );
        // Read back as RFC 4180 says, every cell is what was written.
        let mut reader = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(text.trim_start_matches('\u{feff}').as_bytes());
        let records: Vec<Vec<String>> = reader
            .records()
            .map(|r| r.expect("a record").iter().map(str::to_owned).collect())
            .collect();
        assert_eq!(
            records,
            [
                vec!["Student", "Q1"],
                vec!["Lovelace, \"Ada\"", "3"],
                vec!["'=1+1", ""]
            ]
        );
    }

    proptest::proptest! {
        #[test]
        fn no_part_between_semicolons_reads_as_a_formula(text in "[=+@;a-z\\-\t ]{0,24}") {
            let written = neutralised(&text);
            for part in written.split(';') {
                proptest::prop_assert!(!reads_as_formula(part), "{:?} in {:?}", part, written);
            }
            // Only quotes were added.
            proptest::prop_assert_eq!(written.replace('\'', ""), text);
        }
    }
}
