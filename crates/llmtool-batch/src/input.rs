//! The dataset, a row at a time (never all in memory): CSV with a header row, JSON Lines (a
//! file, or `-` for standard input), or Parquet; and how a row's columns become the tool's
//! values.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use llmtool_core::model::VariableKind;
use llmtool_core::template::VariableSpec;
use serde_json::{Map, Value};

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

/// The rows of a dataset, read as they are asked for.
pub struct RowReader {
    path: String,
    source: Source,
    id_column: Option<String>,
    index: u64,
}

enum Source {
    Csv { reader: csv::Reader<Box<dyn Read + Send>>, headers: Vec<String> },
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
        let source = match extension.as_str() {
            "csv" => {
                // Flexible: a ragged row is the row's problem, reported in its record, not the end.
                let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(open()?);
                let headers = reader
                    .headers()
                    .map_err(|e| InputError::Csv { path: shown.clone(), detail: e.to_string() })?
                    .iter()
                    .map(str::to_owned)
                    .collect();
                Source::Csv { reader, headers }
            }
            "jsonl" | "ndjson" => Source::Lines(Box::new(BufReader::new(open()?))),
            "parquet" if shown != "-" => Source::Parquet(
                ParquetRows::open(path)
                    .map_err(|detail| InputError::Parquet { path: shown.clone(), detail })?,
            ),
            _ if shown == "-" => Source::Lines(Box::new(BufReader::new(open()?))),
            _ => return Err(InputError::Format { path: shown }),
        };
        Ok(RowReader { path: shown, source, id_column, index: 0 })
    }

    fn next_columns(&mut self) -> Option<Result<Next, InputError>> {
        let path = self.path.clone();
        match &mut self.source {
            Source::Csv { reader, headers } => {
                let mut record = csv::ByteRecord::new();
                match reader.read_byte_record(&mut record) {
                    Ok(false) => None,
                    Ok(true) => {
                        let fields: Vec<String> = record
                            .iter()
                            .map(|f| String::from_utf8_lossy(f).into_owned())
                            .collect();
                        if fields.len() != headers.len() {
                            let reason = format!(
                                "{path}, line {}: {} field(s) where the header has {}",
                                record.position().map_or(0, csv::Position::line),
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
                }
            }
            Source::Parquet(rows) => Some(
                rows.next_row()?
                    .map(Next::Columns)
                    .map_err(|detail| InputError::Parquet { path, detail }),
            ),
            Source::Lines(lines) => loop {
                let mut line = Vec::new();
                match lines.read_until(b'\n', &mut line) {
                    Ok(0) => return None,
                    Ok(_) if line.trim_ascii().is_empty() => {}
                    Ok(_) => {
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
                    Err(source) => return Some(Err(InputError::Open { path, source })),
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
}

impl Mapping {
    /// The values of `row` for `variables`, as `render --vars` takes them. A multi-select's
    /// column may be a JSON list or a comma-separated list; an empty cell is no value.
    pub fn values(&self, row: &Row, variables: &[VariableSpec]) -> Value {
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
                (_, other) => other.clone(),
            };
            values.insert(variable.name.clone(), value);
        }
        Value::Object(values)
    }
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
        let document = llmtool_core::Document::from_text(text.to_string());
        let tool = document.tool.unwrap_or_else(|| unreachable!());
        llmtool_core::template::ToolTemplate::new(&tool).variables().to_vec()
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
        let mapping = Mapping { pairs: vec![("text".into(), "body".into())] };
        let variables = variables();
        assert_eq!(
            mapping.values(&rows[0], &variables),
            serde_json::json!({"text": "Hello, world", "tags": ["a", "b"]})
        );
        assert_eq!(
            mapping.values(&rows[1], &variables),
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
