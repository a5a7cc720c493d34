//! Sheets as one XLSX workbook (`rust_xlsxwriter`): every text a string cell (never a formula),
//! and a text a spreadsheet would read as a formula also marked with the quote prefix, so that
//! editing the cell keeps it text; numbers are numbers.

use rust_xlsxwriter::{Format, Workbook, XlsxError};

use super::csv::reads_as_formula;
use super::markbook::{Cell, Sheet};

/// The workbook of `sheets`, in order.
pub fn write(sheets: &[Sheet]) -> Result<Vec<u8>, XlsxError> {
    let mut workbook = Workbook::new();
    let bold = Format::new().set_bold();
    let quoted = Format::new().set_quote_prefix();
    let bold_quoted = Format::new().set_bold().set_quote_prefix();
    for sheet in sheets {
        let worksheet = workbook.add_worksheet();
        worksheet.set_name(sheet.name)?;
        for (col, title) in sheet.header.iter().enumerate() {
            let col = column(col)?;
            let format = if reads_as_formula(title) {
                &bold_quoted
            } else {
                &bold
            };
            worksheet.write_string_with_format(0, col, title, format)?;
        }
        for (r, row) in sheet.rows.iter().enumerate() {
            let r = u32::try_from(r + 1).map_err(|_| XlsxError::RowColumnLimitError)?;
            for (col, cell) in row.iter().enumerate() {
                let col = column(col)?;
                match cell {
                    Cell::Empty => {}
                    Cell::Int(n) => {
                        worksheet.write_number(r, col, *n as f64)?;
                    }
                    Cell::Decimal(x) => {
                        worksheet.write_number(r, col, *x)?;
                    }
                    Cell::Text(t) if reads_as_formula(t) => {
                        worksheet.write_string_with_format(r, col, t, &quoted)?;
                    }
                    Cell::Text(t) => {
                        worksheet.write_string(r, col, t)?;
                    }
                }
            }
        }
        worksheet.set_freeze_panes(1, 0)?;
    }
    workbook.save_to_buffer()
}

fn column(col: usize) -> Result<u16, XlsxError> {
    u16::try_from(col).map_err(|_| XlsxError::RowColumnLimitError)
}

#[cfg(test)]
mod tests {
    use calamine::{Data, Reader, Xlsx};

    use super::*;

    #[test]
    fn texts_are_strings_and_numbers_numbers_when_read_back() {
        let sheet = Sheet {
            name: "Marks",
            header: vec!["Student".into(), "Q1".into(), "Percentage".into()],
            rows: vec![
                vec![
                    Cell::Text("=HYPERLINK(\"http://x\")".into()),
                    Cell::Int(3),
                    Cell::Decimal(37.5),
                ],
                vec![
                    Cell::Text("Ada".into()),
                    Cell::Text("2–4".into()),
                    Cell::Empty,
                ],
            ],
        };
        let bytes = write(&[sheet]).expect("written");
        let mut book: Xlsx<_> =
            calamine::open_workbook_from_rs(std::io::Cursor::new(bytes)).expect("read back");
        let range = book.worksheet_range("Marks").expect("sheet");
        let cells: Vec<Vec<Data>> = range.rows().map(<[Data]>::to_vec).collect();
        assert_eq!(
            cells,
            vec![
                vec![
                    Data::String("Student".into()),
                    Data::String("Q1".into()),
                    Data::String("Percentage".into())
                ],
                vec![
                    Data::String("=HYPERLINK(\"http://x\")".into()),
                    Data::Float(3.0),
                    Data::Float(37.5)
                ],
                vec![
                    Data::String("Ada".into()),
                    Data::String("2–4".into()),
                    Data::Empty
                ],
            ]
        );
        let formulas = book.worksheet_formula("Marks").expect("formulas");
        assert!(
            formulas.used_cells().all(|(_, _, f)| f.is_empty()),
            "no cell holds a formula"
        );
    }
}
