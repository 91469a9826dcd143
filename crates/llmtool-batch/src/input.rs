//! The dataset, a row at a time (never all in memory): CSV with a header row, JSON Lines (a
//! file, or `-` for standard input), or Parquet; and how a row's columns become the tool's
//! values.

use std::io::{BufRead, BufReader, Read};

use llmtool_format::limits::DEFAULT_MAX_FILE_BYTES;
use std::path::Path;

use llmtool_format::model::VariableKind;
use llmtool_format::template::VariableSpec;
use serde_json::{Map, Value};

use crate::bounded::{Bounded, CsvRecords, read_line};
use crate::parquet::ParquetRows;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {source}")]
    Open { path: String, source: std::io::Error },
    #[error("{path}: {detail}")]
    Csv { path: String, detail: String },
    #[error("{path}: {detail}")]
    Parquet { path: String, detail: String },
    #[error(
        "{path}: unknown data format: name it .csv, .jsonl, .ndjson or .parquet (or `-` for JSON Lines on standard input)"
    )]
    Format { path: String },
}

/// One row: its place (from 1), its id (the `--id` column, else the place) and its columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub index: u64,
    pub id: String,
    pub columns: Map<String, Value>,
    /// Set when the row could not be read as a row; it is written as `invalid`, never sent.
    pub malformed: Option<Malformed>,
}

/// A row the reader could not make sense of: a CSV row with another number of fields than
/// the header, or a JSON line that is not an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub reason: String,
    /// The row as it was read (what its key is made of).
    pub text: String,
}

/// What the reader made of the next row.
enum Next {
    Columns(Map<String, Value>),
    Malformed(Malformed),
}

/// The rows of a dataset, read as they are asked for, each at most [`RowReader::with_row_limit`]
/// bytes in memory (a longer CSV record or JSON line is read past and is a malformed row).
pub struct RowReader {
    path: String,
    source: Source,
    id_column: Option<String>,
    index: u64,
    row_limit: usize,
}

enum Source {
    Csv { records: Box<CsvRecords>, headers: Vec<String> },
    Lines(Box<dyn BufRead + Send>),
    Parquet(ParquetRows),
}

impl std::fmt::Debug for RowReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowReader")
            .field("path", &self.path)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl RowReader {
    /// Opens `path` (`-`: JSON Lines on standard input); `id_column` names the column that
    /// identifies a row.
    pub fn open(path: &Path, id_column: Option<String>) -> Result<RowReader, InputError> {
        let shown = path.display().to_string();
        let extension =
            path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_lowercase();
        let open = || -> Result<Box<dyn Read + Send>, InputError> {
            if shown == "-" {
                return Ok(Box::new(std::io::stdin()));
            }
            std::fs::File::open(path)
                .map(|file| Box::new(file) as Box<dyn Read + Send>)
                .map_err(|source| InputError::Open { path: shown.clone(), source })
        };
        let row_limit = usize::try_from(DEFAULT_MAX_FILE_BYTES).unwrap_or(usize::MAX);
        let source = match extension.as_str() {
            "csv" => {
                // Flexible: a ragged row is the row's problem, reported in its record, not the end.
                let mut records = CsvRecords::new(Box::new(BufReader::new(open()?)), row_limit);
                let csv_error = |detail: String| InputError::Csv { path: shown.clone(), detail };
                let headers = match records.next_record() {
                    Ok(Some(Bounded::Whole(header))) => header
                        .fields
                        .iter()
                        .map(|f| String::from_utf8_lossy(f).into_owned())
                        .collect(),
                    Ok(Some(Bounded::TooLong { bytes, .. })) => {
                        return Err(csv_error(format!("the header row is {bytes} bytes long")));
                    }
                    Ok(None) => Vec::new(),
                    Err(error) => return Err(csv_error(error.to_string())),
                };
                Source::Csv { records: Box::new(records), headers }
            }
            "jsonl" | "ndjson" => Source::Lines(Box::new(BufReader::new(open()?))),
            "parquet" if shown != "-" => Source::Parquet(
                ParquetRows::open(path)
                    .map_err(|detail| InputError::Parquet { path: shown.clone(), detail })?,
            ),
            _ if shown == "-" => Source::Lines(Box::new(BufReader::new(open()?))),
            _ => return Err(InputError::Format { path: shown }),
        };
        Ok(RowReader { path: shown, source, id_column, index: 0, row_limit })
    }

    /// Rows of at most `bytes` (the tool-file size limit, `LLMTOOL_MAX_FILE_BYTES`, is what
    /// `llmtool batch` gives); a longer one is read past, never held, and is `invalid`.
    #[must_use]
    pub fn with_row_limit(mut self, bytes: u64) -> RowReader {
        self.row_limit = usize::try_from(bytes).unwrap_or(usize::MAX).max(1);
        if let Source::Csv { records, .. } = &mut self.source {
            records.set_limit(self.row_limit);
        }
        self
    }

    /// The malformed row of one too long to read.
    fn too_long(&self, bytes: u64, start_hash: &str) -> Next {
        let reason = format!(
            "{}, row {}: {bytes} bytes, more than the {} a row may have (LLMTOOL_MAX_FILE_BYTES sets it); not read, not sent",
            self.path,
            self.index + 1,
            self.row_limit
        );
        Next::Malformed(Malformed { reason, text: format!("{bytes} bytes, starting {start_hash}") })
    }

    fn next_columns(&mut self) -> Option<Result<Next, InputError>> {
        let path = self.path.clone();
        match &mut self.source {
            Source::Csv { records, headers } => match records.next_record() {
                Ok(None) => None,
                Ok(Some(Bounded::TooLong { bytes, start_hash })) => {
                    Some(Ok(self.too_long(bytes, &start_hash)))
                }
                Ok(Some(Bounded::Whole(record))) => {
                    let fields: Vec<String> = record
                        .fields
                        .into_iter()
                        .map(|f| {
                            String::from_utf8(f).unwrap_or_else(|e| {
                                String::from_utf8_lossy(e.as_bytes()).into_owned()
                            })
                        })
                        .collect();
                    if fields.len() != headers.len() {
                        let reason = format!(
                            "{path}, line {}: {} field(s) where the header has {}",
                            record.line,
                            fields.len(),
                            headers.len()
                        );
                        return Some(Ok(Next::Malformed(Malformed {
                            reason,
                            text: fields.join("\u{1f}"),
                        })));
                    }
                    Some(Ok(Next::Columns(
                        headers
                            .iter()
                            .cloned()
                            .zip(fields.into_iter().map(Value::String))
                            .collect(),
                    )))
                }
                Err(error) => Some(Err(InputError::Csv { path, detail: error.to_string() })),
            },
            Source::Parquet(rows) => Some(
                rows.next_row()?
                    .map(Next::Columns)
                    .map_err(|detail| InputError::Parquet { path, detail }),
            ),
            Source::Lines(lines) => loop {
                let line = match read_line(lines.as_mut(), self.row_limit) {
                    Ok(Some(Bounded::Whole(line))) => line,
                    Ok(Some(Bounded::TooLong { bytes, start_hash })) => {
                        return Some(Ok(self.too_long(bytes, &start_hash)));
                    }
                    Ok(None) => return None,
                    Err(source) => return Some(Err(InputError::Open { path, source })),
                };
                match line {
                    _ if line.trim_ascii().is_empty() => {}
                    _ => {
                        let line_number = self.index + 1;
                        let malformed = |detail: String| {
                            let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                            let reason =
                                format!("{path}, row {line_number}: not a JSON object ({detail})");
                            Ok(Next::Malformed(Malformed { reason, text }))
                        };
                        return Some(match serde_json::from_slice::<Value>(&line) {
                            Ok(Value::Object(columns)) => Ok(Next::Columns(columns)),
                            Ok(other) => malformed(format!("a {}", kind_of(&other))),
                            Err(error) => malformed(error.to_string()),
                        });
                    }
                }
            },
        }
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

impl Iterator for RowReader {
    type Item = Result<Row, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        let read = self.next_columns()?;
        self.index += 1;
        Some(read.map(|read| match read {
            Next::Columns(columns) => {
                let id = self
                    .id_column
                    .as_ref()
                    .and_then(|column| columns.get(column))
                    .map_or_else(|| self.index.to_string(), text_of);
                Row { index: self.index, id, columns, malformed: None }
            }
            Next::Malformed(malformed) => Row {
                index: self.index,
                id: self.index.to_string(),
                columns: Map::new(),
                malformed: Some(malformed),
            },
        }))
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Which column gives each variable: a column of the variable's name, unless `--map
/// VAR=COLUMN` says another.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapping {
    pub pairs: Vec<(String, String)>,
    /// With `--documents`: the folder that a text cell starting with `@` names a document in
    /// (its text is the value; `@@` starts a value with `@`). Without, cells are as written.
    pub documents: Option<std::path::PathBuf>,
}

impl Mapping {
    /// The values of `row` for `variables`, as `render --vars` takes them. A multi-select's
    /// column may be a JSON list or a comma-separated list; an empty cell is no value. A
    /// document that gives no text is the row's problem (`Err`).
    pub fn values(&self, row: &Row, variables: &[VariableSpec]) -> Result<Value, String> {
        let mut values = Map::new();
        for variable in variables {
            let column = self
                .pairs
                .iter()
                .find(|(name, _)| *name == variable.name)
                .map_or(variable.name.as_str(), |(_, column)| column.as_str());
            let Some(cell) = row.columns.get(column) else { continue };
            let value = match (variable.kind, cell) {
                (_, Value::Null) => continue,
                (_, Value::String(text)) if text.is_empty() => continue,
                (VariableKind::MultiSelect, Value::String(text)) => list_of(text),
                (VariableKind::Text, Value::String(text)) => match &self.documents {
                    Some(folder) => Value::String(document_cell(&variable.name, text, folder)?),
                    None => Value::String(text.clone()),
                },
                (_, other) => other.clone(),
            };
            values.insert(variable.name.clone(), value);
        }
        Ok(Value::Object(values))
    }
}

/// A text cell read with `--documents`: as [`llmtool_documents::written`] reads it, inside
/// the dataset's `folder`.
fn document_cell(name: &str, cell: &str, folder: &std::path::Path) -> Result<String, String> {
    let path = match llmtool_documents::written(cell, Some(folder)) {
        Ok(llmtool_documents::Written::Value(value)) => return Ok(value.to_owned()),
        Ok(llmtool_documents::Written::Document(path)) => path,
        Err(problem) => return Err(format!("`{name}`: {problem}")),
    };
    llmtool_documents::read(&path, &llmtool_documents::Limits::default())
        .map(|read| read.text)
        .map_err(|error| format!("`{name}`: {} gives no value: {error}", path.display()))
}

/// A multi-select cell: `["a", "b"]`, or `a, b`.
fn list_of(text: &str) -> Value {
    if text.trim_start().starts_with('[')
        && let Ok(list @ Value::Array(_)) = serde_json::from_str(text)
    {
        return list;
    }
    Value::Array(
        text.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| Value::String(item.to_owned()))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variables of a tool with a text `text` and a multi-select `tags`.
    fn variables() -> Vec<VariableSpec> {
        let text = serde_json::json!({"model_prompt": "{{text}} {{tags}}", "metadata": {"prompt_name": "T",
            "variables": [{"name": "text", "type": "text", "description": "d"},
                          {"name": "tags", "type": "multi-select", "description": "d"}]}});
        let document = llmtool_format::Document::from_text(text.to_string());
        let tool = document.tool.unwrap_or_else(|| unreachable!());
        llmtool_format::template::ToolTemplate::new(&tool).variables().to_vec()
    }

    #[test]
    fn csv_rows_map_to_values_and_lists_split() {
        let dir = tempfile::tempdir().unwrap_or_else(|_| unreachable!());
        let path = dir.path().join("rows.csv");
        std::fs::write(
            &path,
            "ticket,body,tags\nT1,\"Hello, world\",\"a, b\"\nT2,,\"[\"\"x\"\"]\"\n",
        )
        .unwrap_or_default();
        let rows: Vec<Row> = RowReader::open(&path, Some("ticket".into()))
            .unwrap_or_else(|e| panic!("{e}"))
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            rows.iter().map(|r| (r.index, r.id.as_str())).collect::<Vec<_>>(),
            [(1, "T1"), (2, "T2")]
        );
        let mapping = Mapping { pairs: vec![("text".into(), "body".into())], documents: None };
        let variables = variables();
        assert_eq!(
            mapping.values(&rows[0], &variables).unwrap(),
            serde_json::json!({"text": "Hello, world", "tags": ["a", "b"]})
        );
        assert_eq!(
            mapping.values(&rows[1], &variables).unwrap(),
            serde_json::json!({"tags": ["x"]}),
            "an empty cell is no value"
        );
    }

    #[test]
    fn a_json_line_that_is_no_object_is_a_malformed_row() {
        let dir = tempfile::tempdir().unwrap_or_else(|_| unreachable!());
        let path = dir.path().join("rows.jsonl");
        std::fs::write(&path, "{\"text\": \"a\"}\n\n[1]\n").unwrap_or_default();
        let rows: Vec<_> = RowReader::open(&path, None).unwrap_or_else(|e| panic!("{e}")).collect();
        let rows: Vec<Row> =
            rows.into_iter().collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rows[0].malformed, None);
        let malformed = rows[1].malformed.clone().unwrap_or_else(|| panic!("a list is no row"));
        assert!(malformed.reason.ends_with("row 2: not a JSON object (a list)"), "{malformed:?}");
        assert_eq!((rows[1].index, malformed.text.as_str()), (2, "[1]"));
        assert!(matches!(
            RowReader::open(&dir.path().join("rows.txt"), None),
            Err(InputError::Format { .. })
        ));
    }
}
