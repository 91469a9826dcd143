//! Parquet in and out, through the `parquet` crate alone (no Arrow: its crates were a tenth of
//! a cold release build). A dataset is read a row at a time with the crate's record reader,
//! each row made a JSON object (lists for multi-selects, groups as objects, as JSON Lines rows
//! have them). The output is written whole from the journal's records at the end of a run,
//! since a Parquet file cannot be appended to: each page of records is one row group.
//!
//! The record reader trusts a file more than a reader of untrusted input should: it panics on
//! some malformed files and types it does not know, and reads as many rows as a row group's
//! metadata claims. So it runs on a thread of its own ([`PARQUET_THREAD`]) whose panic becomes
//! that file's error, and each row group's claimed row count is checked against its columns
//! before it is read, so that no row is dropped in silence.

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::metadata::RowGroupMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::reader::TreeBuilder;
use parquet::schema::types::Type;
use serde_json::{Map, Value};

/// The name of the thread that reads a Parquet dataset: a panic on it is that file's error,
/// and the program's panic hook keeps it off the terminal.
pub const PARQUET_THREAD: &str = "llmtool-parquet-reader";

/// Rows read ahead of the batch, at most.
const ROWS_AHEAD: usize = 1024;

/// The largest footer (the file's schema and metadata) read: real files have a few kilobytes
/// to a few megabytes; the format allows 4 GB.
const MAX_FOOTER_BYTES: u64 = 64 << 20;

/// The reader's stack: the schema is read by recursion, as deep as the file nests it.
const READER_STACK_BYTES: usize = 64 << 20;

type RowResult = Result<Map<String, Value>, String>;

/// A Parquet dataset's rows, as JSON objects, read ahead on their own thread.
pub(crate) struct ParquetRows {
    rows: Receiver<RowResult>,
    first: Option<RowResult>,
}

impl ParquetRows {
    /// Opens the file and reads its first row, so that a file that is not Parquet is an error
    /// here.
    pub(crate) fn open(path: &Path) -> Result<ParquetRows, String> {
        let mut file = File::open(path).map_err(|e| e.to_string())?;
        check_footer(&mut file)?;
        let (sender, rows) = sync_channel(ROWS_AHEAD);
        std::thread::Builder::new()
            .name(PARQUET_THREAD.to_owned())
            .stack_size(READER_STACK_BYTES)
            .spawn(move || {
                let reading = std::panic::AssertUnwindSafe(|| read_rows(file, &sender));
                if let Err(panic) = std::panic::catch_unwind(reading) {
                    let reason = panic
                        .downcast_ref::<&str>()
                        .map(|reason| (*reason).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    let _ = sender.send(Err(format!(
                        "the Parquet reader stopped on this file (malformed, or of a type it \
                         cannot read): {reason}"
                    )));
                }
            })
            .map_err(|e| e.to_string())?;
        match rows.recv() {
            Ok(Err(error)) => Err(error),
            Ok(row) => Ok(ParquetRows { rows, first: Some(row) }),
            Err(_) => Ok(ParquetRows { rows, first: None }),
        }
    }

    /// The next row; an error when the file cannot be read on.
    pub(crate) fn next_row(&mut self) -> Option<RowResult> {
        self.first.take().or_else(|| self.rows.recv().ok())
    }
}

/// Refuses a file whose footer claims more than [`MAX_FOOTER_BYTES`] before the reader
/// allocates that much.
fn check_footer(file: &mut File) -> Result<(), String> {
    let mut tail = [0_u8; 8];
    let read = file.seek(SeekFrom::End(-8)).and_then(|_| file.read_exact(&mut tail));
    if read.is_err() || &tail[4..] != b"PAR1" {
        return Err("not a Parquet file (it does not end with PAR1)".to_owned());
    }
    let footer = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if footer > MAX_FOOTER_BYTES {
        return Err(format!(
            "the file's metadata claims {footer} bytes (at most {MAX_FOOTER_BYTES} are read)"
        ));
    }
    file.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    Ok(())
}

/// Whether a row group holds the rows its metadata claims: each column that is not a list has
/// one value (or null) a row. The record reader reads as many rows as claimed and would leave
/// the rest unread, without a word.
fn check_row_count(group: &RowGroupMetaData, index: usize) -> Result<(), String> {
    let rows = group.num_rows();
    for column in group.columns() {
        if column.column_descr().max_rep_level() == 0 && column.num_values() != rows {
            return Err(format!(
                "row group {index} claims {rows} rows, but its column `{}` holds {} values",
                column.column_descr().path().string(),
                column.num_values()
            ));
        }
    }
    Ok(())
}

/// Sends every row of the file, then ends; stops at the first error (sent too), or when the
/// batch stops listening. A null column of a row is left out, as JSON Lines leaves out what a
/// row does not have.
fn read_rows(file: File, rows: &SyncSender<RowResult>) {
    let send_error = |error: parquet::errors::ParquetError| {
        let _ = rows.send(Err(error.to_string()));
    };
    let reader = match SerializedFileReader::new(file) {
        Ok(reader) => reader,
        Err(error) => return send_error(error),
    };
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    if let Some(name) = empty_group(schema.root_schema()) {
        let _ = rows.send(Err(format!("the group column `{name}` has no fields")));
        return;
    }
    for group in 0..reader.num_row_groups() {
        if let Err(error) = check_row_count(reader.metadata().row_group(group), group) {
            let _ = rows.send(Err(error));
            return;
        }
        let iterator = reader
            .get_row_group(group)
            .and_then(|group| TreeBuilder::new().as_iter(Arc::clone(&schema), &*group));
        let iterator = match iterator {
            Ok(iterator) => iterator,
            Err(error) => return send_error(error),
        };
        for row in iterator {
            let row = match row {
                Ok(row) => row,
                Err(error) => return send_error(error),
            };
            let row = match row.to_json_value() {
                Value::Object(mut row) => {
                    row.retain(|_, value| !value.is_null());
                    Ok(row)
                }
                _ => Err("a row could not be read".to_owned()),
            };
            let failed = row.is_err();
            if rows.send(row).is_err() || failed {
                return;
            }
        }
    }
}

/// The name of a group with no fields, which the record reader cannot read (it panics).
fn empty_group(node: &Type) -> Option<&str> {
    if !node.is_group() {
        return None;
    }
    let fields = node.get_fields();
    if fields.is_empty() {
        return Some(node.name());
    }
    fields.iter().find_map(|field| empty_group(field))
}

/// What a column of the output holds.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Count,
    Dollars,
}

/// The output's columns, as the JSON Lines records have them: name, kind, whether every
/// record has a value.
const COLUMNS: [(&str, Kind, bool); 12] = [
    ("id", Kind::Text, true),
    ("row", Kind::Count, true),
    ("outcome", Kind::Text, true),
    ("output", Kind::Text, false),
    ("error", Kind::Text, false),
    ("provider", Kind::Text, false),
    ("model", Kind::Text, false),
    ("input_tokens", Kind::Count, false),
    ("output_tokens", Kind::Count, false),
    ("cost_usd", Kind::Dollars, false),
    ("latency_ms", Kind::Count, false),
    ("key", Kind::Text, true),
];

/// The output's Parquet schema: text as UTF-8 strings, counts as unsigned 64-bit integers,
/// dollars as doubles.
fn schema() -> Result<Type, String> {
    let fields: Vec<String> = COLUMNS
        .iter()
        .map(|(name, kind, required)| {
            let repetition = if *required { "REQUIRED" } else { "OPTIONAL" };
            let (column, annotation) = match kind {
                Kind::Text => ("BYTE_ARRAY", " (STRING)"),
                Kind::Count => ("INT64", " (INTEGER(64,false))"),
                Kind::Dollars => ("DOUBLE", ""),
            };
            format!("{repetition} {column} {name}{annotation};")
        })
        .collect();
    let message = format!("message record {{ {} }}", fields.join(" "));
    parquet::schema::parser::parse_message_type(&message).map_err(|e| e.to_string())
}

/// Writes records (JSON Lines, as the journal keeps them for a Parquet output) to a Parquet
/// file, a row group for each page of records.
pub(crate) struct ParquetOutput {
    writer: SerializedFileWriter<File>,
}

impl ParquetOutput {
    pub(crate) fn create(path: &Path) -> Result<ParquetOutput, String> {
        let (file, _) = llmtool_log::private::open_private(
            std::fs::OpenOptions::new().write(true).create(true).truncate(true),
            path,
        )
        .map_err(|e| e.to_string())?;
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let writer = SerializedFileWriter::new(file, Arc::new(schema()?), Arc::new(properties))
            .map_err(|e| e.to_string())?;
        Ok(ParquetOutput { writer })
    }

    /// Adds records, each a JSON object, as one row group. A record that does not fit the
    /// columns is an error before anything is written, so the file stays whole.
    pub(crate) fn write(&mut self, records: &[String]) -> Result<(), String> {
        if records.is_empty() {
            return Ok(());
        }
        let records = records
            .iter()
            .map(|record| match serde_json::from_str(record) {
                Ok(Value::Object(record)) => Ok(record),
                _ => Err("a journal record is not a JSON object".to_owned()),
            })
            .collect::<Result<Vec<Map<String, Value>>, String>>()?;
        let columns = COLUMNS
            .iter()
            .map(|&(name, kind, required)| Column::of(&records, name, kind, required))
            .collect::<Result<Vec<Column>, String>>()?;
        let mut group = self.writer.next_row_group().map_err(|e| e.to_string())?;
        for column in &columns {
            let mut writer = group
                .next_column()
                .map_err(|e| e.to_string())?
                .ok_or("the output has fewer columns than its schema")?;
            let levels = column.levels.as_deref();
            let written = match &column.values {
                Values::Text(values) => {
                    writer.typed::<ByteArrayType>().write_batch(values, levels, None)
                }
                Values::Count(values) => {
                    writer.typed::<Int64Type>().write_batch(values, levels, None)
                }
                Values::Dollars(values) => {
                    writer.typed::<DoubleType>().write_batch(values, levels, None)
                }
            };
            written.map_err(|e| e.to_string())?;
            writer.close().map_err(|e| e.to_string())?;
        }
        group.close().map_err(|e| e.to_string())?;
        Ok(())
    }

    /// Finishes the file and puts it on disk.
    pub(crate) fn finish(self) -> Result<(), String> {
        let file = self.writer.into_inner().map_err(|e| e.to_string())?;
        file.sync_all().map_err(|e| e.to_string())
    }
}

/// One column of a row group: its values, and (for a column that may have none) whether each
/// record has one.
struct Column {
    values: Values,
    levels: Option<Vec<i16>>,
}

enum Values {
    Text(Vec<ByteArray>),
    Count(Vec<i64>),
    Dollars(Vec<f64>),
}

impl Column {
    fn of(
        records: &[Map<String, Value>],
        name: &str,
        kind: Kind,
        required: bool,
    ) -> Result<Column, String> {
        let cells: Vec<Option<&Value>> = records
            .iter()
            .map(|record| record.get(name).filter(|value| !value.is_null()))
            .collect();
        if required && cells.iter().any(Option::is_none) {
            return Err(format!("a record has no `{name}`"));
        }
        let levels =
            (!required).then(|| cells.iter().map(|cell| i16::from(cell.is_some())).collect());
        let present: Vec<&Value> = cells.into_iter().flatten().collect();
        let values = match kind {
            Kind::Text => {
                Values::Text(typed(&present, name, |value| value.as_str().map(ByteArray::from))?)
            }
            // An unsigned column keeps the bits of its values in Parquet's INT64.
            Kind::Count => {
                Values::Count(typed(&present, name, |value| value.as_u64().map(u64::cast_signed))?)
            }
            Kind::Dollars => Values::Dollars(typed(&present, name, Value::as_f64)?),
        };
        Ok(Column { values, levels })
    }
}

/// Each present value as the column's type; one of another type is the record's error.
fn typed<T>(
    present: &[&Value],
    name: &str,
    convert: impl Fn(&Value) -> Option<T>,
) -> Result<Vec<T>, String> {
    present
        .iter()
        .map(|value| convert(value))
        .collect::<Option<Vec<T>>>()
        .ok_or_else(|| format!("a record's `{name}` is not of its column's type"))
}

#[cfg(test)]
mod tests;
