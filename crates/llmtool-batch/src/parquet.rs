//! Parquet in and out, through the `parquet` and `arrow-json` crates: a dataset is read a
//! record batch at a time, each batch's rows made JSON objects (so that every Arrow type,
//! lists for multi-selects included, maps as JSON Lines rows do); the output is written whole
//! from the journal's records at the end of a run, since a Parquet file cannot be appended to.

use std::collections::VecDeque;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde_json::{Map, Value};

/// Rows read at a time.
const BATCH_ROWS: usize = 1024;

/// A Parquet dataset's rows, as JSON objects, a batch at a time.
pub(crate) struct ParquetRows {
    batches: ParquetRecordBatchReader,
    rows: VecDeque<Map<String, Value>>,
}

impl ParquetRows {
    pub(crate) fn open(path: &Path) -> Result<ParquetRows, String> {
        let file = File::open(path).map_err(|e| e.to_string())?;
        let batches = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|builder| builder.with_batch_size(BATCH_ROWS).build())
            .map_err(|e| e.to_string())?;
        Ok(ParquetRows { batches, rows: VecDeque::new() })
    }

    /// The next row; an error when the file cannot be read on.
    pub(crate) fn next_row(&mut self) -> Option<Result<Map<String, Value>, String>> {
        while self.rows.is_empty() {
            let batch = match self.batches.next()? {
                Ok(batch) => batch,
                Err(error) => return Some(Err(error.to_string())),
            };
            let mut lines = arrow_json::LineDelimitedWriter::new(Vec::new());
            if let Err(error) = lines.write(&batch).and_then(|()| lines.finish()) {
                return Some(Err(error.to_string()));
            }
            for line in lines.into_inner().split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                match serde_json::from_slice(line) {
                    Ok(Value::Object(row)) => self.rows.push_back(row),
                    Ok(_) | Err(_) => return Some(Err("a row could not be read".to_owned())),
                }
            }
        }
        self.rows.pop_front().map(Ok)
    }
}

/// The output's columns, as the JSON Lines records have them.
fn schema() -> Arc<Schema> {
    let text = |name: &str, nullable| Field::new(name, DataType::Utf8, nullable);
    let count = |name: &str| Field::new(name, DataType::UInt64, true);
    Arc::new(Schema::new(vec![
        text("id", false),
        Field::new("row", DataType::UInt64, false),
        text("outcome", false),
        text("output", true),
        text("error", true),
        text("provider", true),
        text("model", true),
        count("input_tokens"),
        count("output_tokens"),
        Field::new("cost_usd", DataType::Float64, true),
        count("latency_ms"),
        text("key", false),
    ]))
}

/// Writes records (JSON Lines, as the journal keeps them for a Parquet output) to a Parquet
/// file, in row groups of the pages given.
pub(crate) struct ParquetOutput {
    writer: ArrowWriter<File>,
    decoder: arrow_json::reader::Decoder,
}

impl ParquetOutput {
    pub(crate) fn create(path: &Path) -> Result<ParquetOutput, String> {
        let schema = schema();
        let (file, _) = llmtool_log::private::open_private(
            std::fs::OpenOptions::new().write(true).create(true).truncate(true),
            path,
        )
        .map_err(|e| e.to_string())?;
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let writer = ArrowWriter::try_new(file, Arc::clone(&schema), Some(properties))
            .map_err(|e| e.to_string())?;
        let decoder = arrow_json::ReaderBuilder::new(schema)
            .with_batch_size(BATCH_ROWS)
            .build_decoder()
            .map_err(|e| e.to_string())?;
        Ok(ParquetOutput { writer, decoder })
    }

    /// Adds records, each a JSON object on its own line.
    pub(crate) fn write(&mut self, records: &[String]) -> Result<(), String> {
        for record in records {
            let mut bytes = record.as_bytes();
            while !bytes.is_empty() {
                let read = self.decoder.decode(bytes).map_err(|e| e.to_string())?;
                if read == 0 {
                    self.flush()?;
                } else {
                    bytes = &bytes[read..];
                }
            }
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<(), String> {
        if let Some(batch) = self.decoder.flush().map_err(|e| e.to_string())? {
            self.writer.write(&batch).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Finishes the file and puts it on disk.
    pub(crate) fn finish(self) -> Result<(), String> {
        let file = self.writer.into_inner().map_err(|e| e.to_string())?;
        file.sync_all().map_err(|e| e.to_string())
    }
}
