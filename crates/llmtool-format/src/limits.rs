//! Bounds on what llmtool reads: a tool or prompt file larger than the limit is refused with a
//! clear error before it is read whole, so that no input can make it take memory without end.

use std::io::Read;

/// The default largest file read: far above any real tool (the largest avatar-laden tools are
/// a few megabytes), small enough that a mistaken or hostile file cannot exhaust memory.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;

/// The environment variable that sets another limit (bytes, or with a `K`, `M` or `G` suffix).
pub const MAX_FILE_BYTES_VARIABLE: &str = "LLMTOOL_MAX_FILE_BYTES";

/// Why bytes could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("it is larger than {}, the most llmtool reads (set {MAX_FILE_BYTES_VARIABLE} to change it)", size(*limit))]
    TooLarge { limit: u64 },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Everything `reader` gives, refusing more than `limit` bytes (without reading past the
/// limit, so a device or an endless pipe is refused too).
pub fn read_bounded(reader: impl Read, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    reader.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// The limit written as `value` (`1000`, `64M`, `1G`...), if it is one.
pub fn parse_size(value: &str) -> Option<u64> {
    let value = value.trim();
    let (digits, unit) = match value.char_indices().last()? {
        (at, c) if c.is_ascii_alphabetic() => (&value[..at], c.to_ascii_uppercase()),
        _ => (value, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        _ => return None,
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_limit_and_no_further() {
        assert_eq!(read_bounded(&b"12345"[..], 5).ok(), Some(b"12345".to_vec()));
        let error = read_bounded(std::io::repeat(b'x'), 1000).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "it is larger than 1000 bytes, the most llmtool reads (set LLMTOOL_MAX_FILE_BYTES to change it)"
            )
        );
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("2k"), Some(2048));
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("lots"), None);
    }
}
