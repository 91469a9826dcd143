//! PostgreSQL values, sent in the binary format, written as text: the common types as
//! `psql` writes them, anything else as its UTF-8 bytes or a note of its type. Written here
//! because a statement's column types are known only once it ran, and the driver decodes
//! a type it was told to expect.

use std::fmt::Write as _;

/// `bytes`, a value of the type named `kind` (`INT4`, `NUMERIC`, ...), as text.
pub(crate) fn text(kind: &str, bytes: &[u8]) -> String {
    decoded(kind, bytes).unwrap_or_else(|| match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => text.to_owned(),
        _ => format!("<{} value>", kind.to_ascii_lowercase()),
    })
}

fn decoded(kind: &str, bytes: &[u8]) -> Option<String> {
    let array = |n: usize| -> Option<&[u8]> { (bytes.len() == n).then_some(bytes) };
    Some(match kind {
        "BOOL" => (if *array(1)?.first()? != 0 { "true" } else { "false" }).to_owned(),
        "INT2" => i16::from_be_bytes(array(2)?.try_into().ok()?).to_string(),
        "INT4" | "OID" => i32::from_be_bytes(array(4)?.try_into().ok()?).to_string(),
        "INT8" => i64::from_be_bytes(array(8)?.try_into().ok()?).to_string(),
        "FLOAT4" => f32::from_be_bytes(array(4)?.try_into().ok()?).to_string(),
        "FLOAT8" => f64::from_be_bytes(array(8)?.try_into().ok()?).to_string(),
        "NUMERIC" => numeric(bytes)?,
        "DATE" => date(i32::from_be_bytes(array(4)?.try_into().ok()?))?.to_string(),
        "TIMESTAMP" => timestamp(i64::from_be_bytes(array(8)?.try_into().ok()?))?
            .to_zoned(jiff::tz::TimeZone::UTC)
            .datetime()
            .to_string(),
        "TIMESTAMPTZ" => timestamp(i64::from_be_bytes(array(8)?.try_into().ok()?))?.to_string(),
        "UUID" => uuid(array(16)?),
        "JSONB" => std::str::from_utf8(bytes.get(1..)?).ok()?.to_owned(),
        "BYTEA" => hex(bytes),
        _ => return None,
    })
}

/// Bytes as PostgreSQL writes them in hex: `\x0a1b`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 + bytes.len() * 2);
    out.push_str("\\x");
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

fn uuid(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(36);
    for (index, byte) in bytes.iter().enumerate() {
        if matches!(index, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// PostgreSQL's dates count days from 2000-01-01.
fn date(days: i32) -> Option<jiff::civil::Date> {
    jiff::civil::date(2000, 1, 1).checked_add(jiff::Span::new().days(i64::from(days))).ok()
}

/// PostgreSQL's timestamps count microseconds from 2000-01-01 00:00 UTC.
fn timestamp(micros: i64) -> Option<jiff::Timestamp> {
    const EPOCH_2000: i64 = 946_684_800_000_000;
    jiff::Timestamp::from_microsecond(micros.checked_add(EPOCH_2000)?).ok()
}

/// A `NUMERIC` in its binary form: digit count, weight (of the first digit, in powers of
/// 10,000), sign, display scale, then the base-10,000 digits.
fn numeric(bytes: &[u8]) -> Option<String> {
    let word = |at: usize| -> Option<i16> {
        Some(i16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
    };
    let count = usize::try_from(word(0)?).ok()?;
    let weight = i32::from(word(2)?);
    let sign = word(4)? as u16;
    let scale = usize::try_from(word(6)?).ok()?;
    match sign {
        0xC000 => return Some("NaN".to_owned()),
        0xD000 => return Some("Infinity".to_owned()),
        0xF000 => return Some("-Infinity".to_owned()),
        _ => {}
    }
    let digits: Vec<i16> = (0..count).map(|i| word(8 + 2 * i)).collect::<Option<_>>()?;
    let mut whole = String::new();
    for power in (0..=weight).rev() {
        let index = usize::try_from(weight - power).ok()?;
        let digit = digits.get(index).copied().unwrap_or(0);
        if whole.is_empty() {
            let _ = write!(whole, "{digit}");
        } else {
            let _ = write!(whole, "{digit:04}");
        }
    }
    if whole.is_empty() {
        whole.push('0');
    }
    let mut fraction = String::new();
    let mut index = weight + 1;
    while fraction.len() < scale {
        let digit = usize::try_from(index).ok().and_then(|i| digits.get(i)).copied().unwrap_or(0);
        let _ = write!(fraction, "{digit:04}");
        index += 1;
    }
    fraction.truncate(scale);
    let minus = if sign == 0x4000 { "-" } else { "" };
    Some(if scale == 0 { format!("{minus}{whole}") } else { format!("{minus}{whole}.{fraction}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerics_dates_and_uuids_read_as_psql_writes_them() {
        // 12345.678: weight 1, digits 1 2345 6780, scale 3.
        let numeric = [0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c];
        assert_eq!(text("NUMERIC", &numeric), "12345.678");
        // -0.05: weight -1, digit 500, scale 2.
        let small = [0, 1, 0xff, 0xff, 0x40, 0, 0, 2, 0x01, 0xf4];
        assert_eq!(text("NUMERIC", &small), "-0.05");
        assert_eq!(text("DATE", &366i32.to_be_bytes()), "2001-01-01");
        assert_eq!(text("TIMESTAMPTZ", &0i64.to_be_bytes()), "2000-01-01T00:00:00Z");
        assert_eq!(text("INT8", &(-7i64).to_be_bytes()), "-7");
        assert_eq!(text("BOOL", &[1]), "true");
        assert_eq!(text("UUID", &[0xab; 16]), "abababab-abab-abab-abab-abababababab");
        assert_eq!(text("TEXT", b"caf\xc3\xa9"), "café");
        assert_eq!(text("POINT", &[0; 16]), "<point value>");
    }
}
