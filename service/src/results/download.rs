//! The files a class's results are downloaded as, the same from the API and the app.

use super::class::ClassResults;
use super::{analysis, csv, markbook, xlsx};

/// A file of a class's results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Download {
    /// The marks sheet as CSV.
    MarkbookCsv,
    /// The workbook: marks, criteria, analysis.
    MarkbookXlsx,
    /// Every criterion decision, one a row, as CSV.
    CriteriaCsv,
}

/// A written file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Its media type.
    pub content_type: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// A file could not be written.
#[derive(Debug, thiserror::Error)]
#[error("writing {what} failed: {message}")]
pub struct WriteError {
    what: &'static str,
    message: String,
}

impl Download {
    /// Every download.
    pub const ALL: [Download; 3] = [
        Download::MarkbookCsv,
        Download::MarkbookXlsx,
        Download::CriteriaCsv,
    ];

    /// Its file name's ending, and the last segment of its routes.
    pub fn file_name(self) -> &'static str {
        match self {
            Download::MarkbookCsv => "markbook.csv",
            Download::MarkbookXlsx => "markbook.xlsx",
            Download::CriteriaCsv => "criteria.csv",
        }
    }

    /// The download whose file name ends `name`.
    pub fn named(name: &str) -> Option<Download> {
        Download::ALL.into_iter().find(|d| d.file_name() == name)
    }

    /// Writes the file.
    pub fn write(self, results: &ClassResults) -> Result<File, WriteError> {
        let failed = |message: String| WriteError {
            what: self.file_name(),
            message,
        };
        Ok(match self {
            Download::MarkbookCsv => File {
                content_type: "text/csv; charset=utf-8",
                bytes: csv::write(&markbook::marks(results)).map_err(|e| failed(e.to_string()))?,
            },
            Download::CriteriaCsv => File {
                content_type: "text/csv; charset=utf-8",
                bytes: csv::write(&markbook::decisions(results))
                    .map_err(|e| failed(e.to_string()))?,
            },
            Download::MarkbookXlsx => File {
                content_type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                bytes: xlsx::write(&[
                    markbook::marks(results),
                    markbook::criteria(results),
                    analysis::sheet(&analysis::analyse(results)),
                ])
                .map_err(|e| failed(e.to_string()))?,
            },
        })
    }
}
