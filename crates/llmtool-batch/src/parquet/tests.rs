//! The Parquet output read back by the Parquet reader, and damaged files read as errors.

use super::*;
use serde_json::json;

fn record(row: u64, output: Option<&str>) -> Value {
    json!({
        "id": format!("T{row}"), "row": row, "outcome": if output.is_some() { "ok" } else { "failed" },
        "output": output, "error": if output.is_some() { Value::Null } else { json!("timed out") },
        "provider": "mock", "model": "m", "input_tokens": 12, "output_tokens": output.map(|_| 3),
        "cost_usd": 0.25, "latency_ms": 7, "key": format!("k{row}"),
    })
}

/// Writes the records in pages of two (a row group each) and returns the file.
fn written(dir: &Path, records: &[Value]) -> std::path::PathBuf {
    let path = dir.join("out.parquet");
    let mut output = ParquetOutput::create(&path).unwrap();
    for page in records.chunks(2) {
        let lines: Vec<String> = page.iter().map(Value::to_string).collect();
        output.write(&lines).unwrap();
    }
    output.finish().unwrap();
    path
}

/// Every row of a file, and the error that ended the reading, if any.
fn read_all(path: &Path) -> (Vec<Map<String, Value>>, Option<String>) {
    let mut rows = match ParquetRows::open(path) {
        Ok(rows) => rows,
        Err(error) => return (Vec::new(), Some(error)),
    };
    let mut read = Vec::new();
    while let Some(row) = rows.next_row() {
        match row {
            Ok(row) => read.push(row),
            Err(error) => return (read, Some(error)),
        }
    }
    (read, None)
}

#[test]
fn the_output_reads_back_as_its_records_a_row_group_a_page_with_typed_columns() {
    let dir = tempfile::tempdir().unwrap();
    let records = [record(0, Some("yes")), record(1, None), record(2, Some("ünïcode ✓"))];
    let path = written(dir.path(), &records);
    let (rows, error) = read_all(&path);
    assert_eq!(error, None);
    // A null is no value: the row has no such column, as a JSON Lines row would not.
    let without_nulls = |record: &Value| {
        let mut record = record.as_object().unwrap().clone();
        record.retain(|_, value| !value.is_null());
        record
    };
    assert_eq!(rows, records.iter().map(without_nulls).collect::<Vec<_>>());

    let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
    assert_eq!(reader.num_row_groups(), 2, "pages of two records");
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let kinds: Vec<String> = schema
        .columns()
        .iter()
        .map(|column| {
            format!("{} {:?} {:?}", column.name(), column.physical_type(), column.converted_type())
        })
        .collect();
    assert_eq!(kinds[0], "id BYTE_ARRAY UTF8");
    assert_eq!(kinds[1], "row INT64 UINT_64");
    assert_eq!(kinds[9], "cost_usd DOUBLE NONE");
    assert_eq!(schema.column(3).max_def_level(), 1, "output may be null");
    assert_eq!(schema.column(0).max_def_level(), 0, "id may not");
}

#[test]
fn a_record_without_a_required_column_or_of_another_type_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut output = ParquetOutput::create(&dir.path().join("out.parquet")).unwrap();
    let mut no_id = record(0, Some("yes"));
    no_id.as_object_mut().unwrap().remove("id");
    assert_eq!(output.write(&[no_id.to_string()]).unwrap_err(), "a record has no `id`");
    let mut text_count = record(0, Some("yes"));
    text_count["input_tokens"] = json!("twelve");
    assert_eq!(
        output.write(&[text_count.to_string()]).unwrap_err(),
        "a record's `input_tokens` is not of its column's type"
    );
    // Nothing was written of either: the file goes on with the next page.
    output.write(&[record(1, None).to_string()]).unwrap();
    output.finish().unwrap();
    let (rows, error) = read_all(&dir.path().join("out.parquet"));
    assert_eq!((rows.len(), error), (1, None));
}

#[test]
fn a_file_that_is_not_parquet_or_is_cut_short_is_an_error_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let bytes =
        std::fs::read(written(dir.path(), &[record(0, Some("a")), record(1, None)])).unwrap();
    let damaged = dir.path().join("damaged.parquet");
    std::fs::write(&damaged, b"id,text\n1,hello\n").unwrap();
    assert!(ParquetRows::open(&damaged).is_err());
    for length in (0..bytes.len()).step_by(7) {
        std::fs::write(&damaged, &bytes[..length]).unwrap();
        assert!(ParquetRows::open(&damaged).is_err(), "cut at {length} bytes");
    }
}

#[test]
fn a_damaged_file_gives_every_row_or_an_error_never_fewer_rows_in_silence() {
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<Value> =
        (0..6).map(|row| record(row, (row % 3 != 1).then_some("x"))).collect();
    let bytes = std::fs::read(written(dir.path(), &records)).unwrap();
    let damaged = dir.path().join("damaged.parquet");
    let mut errors = 0;
    // Every third byte between the magic numbers, its lowest bit or all its bits flipped.
    for at in (4..bytes.len() - 8).step_by(3) {
        let flip = if at % 2 == 0 { 0x01_u8 } else { 0xff };
        let mut copy = bytes.clone();
        copy[at] ^= flip;
        std::fs::write(&damaged, &copy).unwrap();
        let (rows, error) = read_all(&damaged);
        match error {
            Some(_) => errors += 1,
            None => assert_eq!(rows.len(), records.len(), "byte {at} ^ {flip:#x}"),
        }
    }
    assert!(errors > 0, "some damage is found");
}

#[test]
fn a_row_group_that_claims_fewer_rows_than_its_columns_hold_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = written(dir.path(), &[record(0, Some("a")), record(1, Some("b"))]);
    let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
    let group = reader.metadata().row_group(0);
    assert_eq!(check_row_count(group, 0), Ok(()));
    let fewer = RowGroupMetaData::builder(group.schema_descr_ptr())
        .set_num_rows(1)
        .set_column_metadata(group.columns().to_vec())
        .build()
        .unwrap();
    assert_eq!(
        check_row_count(&fewer, 0).unwrap_err(),
        "row group 0 claims 1 rows, but its column `id` holds 2 values"
    );
}

#[test]
fn a_type_the_reader_cannot_read_is_the_files_error_not_a_crash() {
    use parquet::data_type::{FixedLenByteArray, FixedLenByteArrayType};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("interval.parquet");
    let schema = parquet::schema::parser::parse_message_type(
        "message m { REQUIRED FIXED_LEN_BYTE_ARRAY(12) span (INTERVAL); }",
    )
    .unwrap();
    let file = File::create(&path).unwrap();
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), Arc::default()).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut column = group.next_column().unwrap().unwrap();
    let span = FixedLenByteArray::from(vec![0_u8; 12]);
    column.typed::<FixedLenByteArrayType>().write_batch(&[span], None, None).unwrap();
    column.close().unwrap();
    group.close().unwrap();
    writer.close().unwrap();
    // The record reader panics on it (not implemented): its thread turns that into an error.
    let (rows, error) = read_all(&path);
    assert!(rows.is_empty());
    let error = error.unwrap();
    assert!(error.starts_with("the Parquet reader stopped on this file"), "{error}");
    assert!(error.contains("INTERVAL"), "{error}");
}

#[test]
fn a_footer_larger_than_the_limit_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big-footer.parquet");
    let mut bytes = b"PAR1".to_vec();
    bytes.extend((u32::MAX - 1).to_le_bytes());
    bytes.extend(b"PAR1");
    std::fs::write(&path, bytes).unwrap();
    let error = ParquetRows::open(&path).err().unwrap();
    assert!(error.starts_with("the file's metadata claims 4294967294 bytes"), "{error}");
}

#[test]
fn a_group_with_no_fields_is_found_before_the_reader_meets_it() {
    let empty = Type::group_type_builder("nothing").build().unwrap();
    let text =
        Type::primitive_type_builder("text", parquet::basic::Type::BYTE_ARRAY).build().unwrap();
    let root = Type::group_type_builder("schema")
        .with_fields(vec![Arc::new(text), Arc::new(empty)])
        .build()
        .unwrap();
    assert_eq!(empty_group(&root), Some("nothing"));
    assert_eq!(empty_group(&schema().unwrap()), None);
}
