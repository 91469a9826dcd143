//! The batch's output file: one record per row, JSON Lines, CSV or Parquet by the file's
//! extension. JSON Lines and CSV are appended to as rows finish and cut back to the journal's
//! committed length when a run starts (dropping what a crash left half-written); Parquet is
//! written whole from the journal at the end of a run.

use std::fs::{File, OpenOptions};
use std::io::{Seek as _, SeekFrom, Write as _};
use std::path::Path;

use llmtool_providers::run::RunReport;
use llmtool_runtime::Rejected;
use serde::{Deserialize, Serialize};

/// The output's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Jsonl,
    Csv,
    /// Written whole from the journal at the end of each run (records are kept there as
    /// JSON Lines meanwhile).
    Parquet,
}

impl OutputFormat {
    /// The format `path`'s extension names.
    pub fn of(path: &Path) -> Option<OutputFormat> {
        match path.extension().and_then(|e| e.to_str()).map(str::to_lowercase).as_deref() {
            Some("jsonl" | "ndjson") => Some(OutputFormat::Jsonl),
            Some("csv") => Some(OutputFormat::Csv),
            Some("parquet") => Some(OutputFormat::Parquet),
            _ => None,
        }
    }

    /// What the file starts with: the CSV header, or nothing.
    pub fn header(self) -> String {
        match self {
            OutputFormat::Jsonl | OutputFormat::Parquet => String::new(),
            OutputFormat::Csv => format!("{}\n", CSV_COLUMNS.join(",")),
        }
    }
}

const CSV_COLUMNS: [&str; 12] = [
    "id",
    "row",
    "outcome",
    "output",
    "error",
    "provider",
    "model",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "latency_ms",
    "key",
];

/// One row's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputRecord {
    pub id: String,
    pub row: u64,
    /// `ok`, `rejected` (the answer never met the expected output), `failed`, or `invalid`
    /// (the row's values could not fill the prompt; nothing was sent).
    pub outcome: String,
    pub output: Option<String>,
    pub error: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
    pub latency_ms: Option<u64>,
    /// The row's key in the journal.
    pub key: String,
}

impl OutputRecord {
    /// Fills in the answer of `report`: `ok` when it met the expected output, else
    /// `rejected` with why.
    pub fn answered(&mut self, report: RunReport) {
        let accepted = Rejected::check(&report).is_ok();
        if accepted { "ok" } else { "rejected" }.clone_into(&mut self.outcome);
        self.output = report.output;
        self.error = report.error;
        self.input_tokens = report.usage.input_tokens;
        self.output_tokens = report.usage.output_tokens;
        self.cost_usd = report.cost;
    }

    /// The record as one line of `format`.
    pub fn line(&self, format: OutputFormat) -> String {
        match format {
            OutputFormat::Jsonl | OutputFormat::Parquet => {
                serde_json::to_string(self).unwrap_or_default() + "\n"
            }
            OutputFormat::Csv => {
                let text = |value: Option<String>| value.unwrap_or_default();
                let number = |value: Option<u64>| value.map(|n| n.to_string()).unwrap_or_default();
                let fields = [
                    self.id.clone(),
                    self.row.to_string(),
                    self.outcome.clone(),
                    text(self.output.clone()),
                    text(self.error.clone()),
                    text(self.provider.clone()),
                    text(self.model.clone()),
                    number(self.input_tokens),
                    number(self.output_tokens),
                    self.cost_usd.map(|c| c.to_string()).unwrap_or_default(),
                    number(self.latency_ms),
                    self.key.clone(),
                ];
                let mut writer = csv::WriterBuilder::new()
                    .terminator(csv::Terminator::Any(b'\n'))
                    .from_writer(Vec::new());
                let _ = writer.write_record(&fields);
                String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
            }
        }
    }
}

/// The output file, open for appending; or nothing, for a Parquet output (written whole from
/// the journal instead).
#[derive(Debug)]
pub struct OutputFile {
    file: Option<File>,
    len: u64,
}

impl OutputFile {
    /// Opens `path` at the journal's `committed` length: anything past it is cut off.
    pub fn open(path: &Path, committed: u64) -> std::io::Result<OutputFile> {
        // The answers: the output is its owner's alone.
        let (mut file, _) = llmtool_log::private::open_private(
            OpenOptions::new().create(true).read(true).write(true).truncate(false),
            path,
        )?;
        let len = file.metadata()?.len();
        if len < committed {
            return Err(std::io::Error::other(format!(
                "{} is shorter ({len} bytes) than its journal says ({committed}): it was changed by something else; move it or its journal away",
                path.display()
            )));
        }
        file.set_len(committed)?;
        file.seek(SeekFrom::Start(committed))?;
        Ok(OutputFile { file: Some(file), len: committed })
    }

    /// No file: records go to the journal only.
    pub fn detached() -> OutputFile {
        OutputFile { file: None, len: 0 }
    }

    pub fn append(&mut self, text: &str) -> std::io::Result<()> {
        if let Some(file) = &mut self.file {
            file.write_all(text.as_bytes())?;
            self.len += text.len() as u64;
        }
        Ok(())
    }

    /// Puts what was appended on disk; the length to commit.
    pub fn sync(&mut self) -> std::io::Result<u64> {
        if let Some(file) = &mut self.file {
            file.flush()?;
            file.sync_data()?;
        }
        Ok(self.len)
    }
}
