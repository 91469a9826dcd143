//! Reading a dataset's rows with a bound on each: a row (a CSV record, a JSON line) of more
//! bytes than the limit is read past, never held, and reported by its size and a hash of its
//! start, so that a 100 MB cell costs its reader the limit, not the cell (the `csv` crate and
//! `read_until` grow their buffer to the whole row). CSV is parsed by `csv-core`, the `csv`
//! crate's own parser, driven here so that the output buffer can stop growing while the
//! parser goes on to the record's end, keeping the quoting straight for the rows after it.

use std::io::{self, BufRead};

use sha2::{Digest as _, Sha256};

/// A row as read: whole, or too long to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Bounded<T> {
    Whole(T),
    /// Its size in bytes, and the SHA-256 (hex) of its first `limit` bytes: with the size,
    /// what the row's key is made of.
    TooLong {
        bytes: u64,
        start_hash: String,
    },
}

/// The next line of `input` (its newline included), kept if it is at most `limit` bytes;
/// `None` at the end.
pub(crate) fn read_line(
    input: &mut dyn BufRead,
    limit: usize,
) -> io::Result<Option<Bounded<Vec<u8>>>> {
    let mut line = Vec::new();
    let mut over: Option<(Sha256, u64)> = None;
    loop {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            break;
        }
        let (taken, ended) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        match &mut over {
            Some((_, bytes)) => *bytes += taken as u64,
            None if line.len() + taken > limit => {
                let kept = limit.saturating_sub(line.len()).min(taken);
                line.extend_from_slice(&buffer[..kept]);
                let hash = Sha256::new_with_prefix(&line);
                over = Some((hash, (line.len() + taken - kept) as u64));
                line = Vec::new();
            }
            None => line.extend_from_slice(&buffer[..taken]),
        }
        input.consume(taken);
        if ended {
            break;
        }
    }
    Ok(match over {
        Some((hash, bytes)) => {
            Some(Bounded::TooLong { bytes, start_hash: hex::encode(hash.finalize()) })
        }
        None if line.is_empty() => None,
        None => Some(Bounded::Whole(line)),
    })
}

/// CSV records, each at most `limit` bytes of fields.
pub(crate) struct CsvRecords {
    parser: csv_core::Reader,
    input: Box<dyn BufRead + Send>,
    limit: usize,
    first: bool,
}

/// One CSV record: its fields, and the line it started on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) fields: Vec<Vec<u8>>,
    pub(crate) line: u64,
}

impl CsvRecords {
    pub(crate) fn new(input: Box<dyn BufRead + Send>, limit: usize) -> CsvRecords {
        CsvRecords { parser: csv_core::Reader::new(), input, limit: limit.max(1), first: true }
    }

    /// Records of at most `limit` bytes from now on.
    pub(crate) fn set_limit(&mut self, limit: usize) {
        self.limit = limit.max(1);
    }

    /// The next record, or `None` at the end. Blank lines are skipped, as the `csv` crate
    /// does; a byte-order mark before the first record is not part of it.
    pub(crate) fn next_record(&mut self) -> io::Result<Option<Bounded<Record>>> {
        let line = self.parser.line();
        let mut out = vec![0u8; self.limit.min(64 << 10)];
        let mut ends = vec![0usize; 64];
        let (mut out_len, mut ends_len) = (0, 0);
        // Once the fields pass the limit: the bytes read past, and the hash of the start.
        let mut over: Option<(String, u64)> = None;
        loop {
            let input = self.input.fill_buf()?;
            if self.first && !input.is_empty() {
                self.first = false;
                if input.starts_with(b"\xEF\xBB\xBF") {
                    self.input.consume(3);
                    continue;
                }
            }
            let (result, read, written, ended) =
                self.parser.read_record(input, &mut out[out_len..], &mut ends[ends_len..]);
            let at_end = input.is_empty();
            self.input.consume(read);
            out_len += written;
            ends_len += ended;
            if let Some((_, bytes)) = &mut over {
                *bytes += written as u64;
                out_len = 0;
            }
            match result {
                // Given no input, the parser ends the record or the data; never asks again.
                csv_core::ReadRecordResult::InputEmpty if at_end => return Ok(None),
                csv_core::ReadRecordResult::InputEmpty => {}
                csv_core::ReadRecordResult::OutputFull => {
                    if over.is_some() {
                        continue;
                    }
                    if out.len() >= self.limit {
                        let hash = hex::encode(Sha256::digest(&out[..out_len]));
                        over = Some((hash, out_len as u64));
                        out_len = 0;
                    } else {
                        let grown = (out.len() * 2).min(self.limit);
                        out.resize(grown, 0);
                    }
                }
                csv_core::ReadRecordResult::OutputEndsFull => {
                    // Fields' ends count against the limit too (a cell of commas).
                    if over.is_none() && ends.len() * std::mem::size_of::<usize>() >= self.limit {
                        let hash = hex::encode(Sha256::digest(&out[..out_len]));
                        over = Some((hash, out_len as u64));
                    }
                    if over.is_some() {
                        ends_len = 0;
                        out_len = 0;
                    } else {
                        ends.resize(ends.len() * 2, 0);
                    }
                }
                csv_core::ReadRecordResult::Record => {
                    if let Some((start_hash, bytes)) = over {
                        return Ok(Some(Bounded::TooLong { bytes, start_hash }));
                    }
                    let mut fields = Vec::with_capacity(ends_len);
                    let mut start = 0;
                    for &end in &ends[..ends_len] {
                        fields.push(out[start..end].to_vec());
                        start = end;
                    }
                    return Ok(Some(Bounded::Whole(Record { fields, line })));
                }
                csv_core::ReadRecordResult::End => return Ok(None),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &[u8], limit: usize) -> Vec<Bounded<Vec<String>>> {
        let mut reader = CsvRecords::new(Box::new(io::Cursor::new(text.to_vec())), limit);
        let mut found = Vec::new();
        while let Some(record) = reader.next_record().expect("read") {
            found.push(match record {
                Bounded::Whole(record) => Bounded::Whole(
                    record.fields.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect(),
                ),
                Bounded::TooLong { bytes, start_hash } => Bounded::TooLong { bytes, start_hash },
            });
        }
        found
    }

    /// What the `csv` crate reads of `text` (flexible, with the header as a record).
    fn by_the_csv_crate(text: &[u8]) -> Vec<Bounded<Vec<String>>> {
        let mut reader =
            csv::ReaderBuilder::new().flexible(true).has_headers(false).from_reader(text);
        reader
            .byte_records()
            .map(|r| {
                let record = r.expect("read");
                Bounded::Whole(
                    record.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn records_are_read_as_the_csv_crate_reads_them() {
        let texts: [&[u8]; 6] = [
            b"a,b\n1,2\n",
            b"\xEF\xBB\xBFa,b\r\n\"x, \"\"quoted\"\"\ny\",2\r\n\r\n3,4,5\n",
            b"a,b\n\n\n1,\n,\n\"\",\"\"",
            b"only\n",
            b"a,b\n\"never closed,2\n3,4\n",
            b"",
        ];
        for text in texts {
            assert_eq!(
                records(text, 1 << 20),
                by_the_csv_crate(text),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn a_record_past_the_limit_is_read_past_and_the_next_is_whole() {
        let cell = "x,\"\n".repeat(50_000);
        let text = format!("a,b\n1,\"{}\"\n2,after\n", cell.replace('"', "\"\""));
        let found = records(text.as_bytes(), 1000);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(found[0], Bounded::Whole(vec!["a".into(), "b".into()]));
        assert!(matches!(&found[1], Bounded::TooLong { bytes, .. } if *bytes > 200_000));
        assert_eq!(found[2], Bounded::Whole(vec!["2".into(), "after".into()]));
        // The same row, the same hash: its key stays across runs.
        assert_eq!(records(text.as_bytes(), 1000)[1], found[1]);
    }

    #[test]
    fn a_line_past_the_limit_is_read_past() {
        let text =
            format!("{{\"a\": 1}}\n{{\"big\": \"{}\"}}\n{{\"b\": 2}}\n", "y".repeat(100_000));
        let mut input = io::Cursor::new(text.into_bytes());
        let first = read_line(&mut input, 1000).expect("read");
        assert_eq!(first, Some(Bounded::Whole(b"{\"a\": 1}\n".to_vec())));
        let second = read_line(&mut input, 1000).expect("read");
        assert!(matches!(second, Some(Bounded::TooLong { bytes, .. }) if bytes > 100_000));
        let third = read_line(&mut input, 1000).expect("read");
        assert_eq!(third, Some(Bounded::Whole(b"{\"b\": 2}\n".to_vec())));
        assert_eq!(read_line(&mut input, 1000).expect("read"), None);
    }
}
