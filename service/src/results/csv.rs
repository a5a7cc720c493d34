//! Sheets as CSV (RFC 4180, UTF-8 with a byte-order mark so that spreadsheets read the names'
//! accents). A text a spreadsheet would read as a formula is written with a leading `'`.

use super::markbook::{Cell, Sheet};

/// Whether a spreadsheet would read `text` as a formula (or a command): it starts with `=`,
/// `+`, `-`, `@`, a tab or a carriage return.
pub fn reads_as_formula(text: &str) -> bool {
    text.starts_with(['=', '+', '-', '@', '\t', '\r'])
}

/// The text a cell is written as.
pub fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Empty => String::new(),
        Cell::Int(n) => n.to_string(),
        Cell::Decimal(x) => format!("{x}"),
        Cell::Text(t) if reads_as_formula(t) => format!("'{t}"),
        Cell::Text(t) => t.clone(),
    }
}

/// The sheet as CSV.
pub fn write(sheet: &Sheet) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::with_capacity(64 * (sheet.rows.len() + 1));
    out.extend_from_slice("\u{feff}".as_bytes());
    let mut writer = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::CRLF)
        .from_writer(out);
    let header: Vec<String> = sheet
        .header
        .iter()
        .map(|h| cell_text(&Cell::Text(h.clone())))
        .collect();
    writer
        .write_record(&header)
        .map_err(std::io::Error::other)?;
    for row in &sheet.rows {
        writer
            .write_record(row.iter().map(cell_text))
            .map_err(std::io::Error::other)?;
    }
    writer.into_inner().map_err(|e| e.into_error())
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
        for text in ["Ada", "3–5", "ABS", " =x", "a=b"] {
            assert!(!reads_as_formula(text), "{text:?}");
            assert_eq!(cell_text(&Cell::Text(text.into())), text);
        }
        assert_eq!(cell_text(&Cell::Int(-3)), "-3");
        assert_eq!(cell_text(&Cell::Decimal(62.5)), "62.5");
    }

    #[test]
    fn a_sheet_is_quoted_as_rfc_4180_says() {
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
            "\u{feff}Student,Q1\r\n\"Lovelace, \"\"Ada\"\"\",3\r\n'=1+1,\r\n"
        );
    }
}
