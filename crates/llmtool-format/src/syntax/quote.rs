//! JSON string quoting, as the canonical form and every fix that writes a string use it.

use std::fmt::Write as _;

/// `value` as a JSON string literal: `"`, `\` and control characters escaped, everything else
/// (including non-ASCII text) written as is.
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    write_quoted(&mut out, value);
    out
}

/// Appends `value` to `out` as a JSON string literal (see [`quote`]).
pub fn write_quoted(out: &mut String, value: &str) {
    out.push('"');
    let mut run_start = 0;
    for (i, byte) in value.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&value[run_start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(escape);
        }
        run_start = i + 1;
    }
    out.push_str(&value[run_start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn escapes_only_what_json_requires() {
        assert_eq!(quote("a\"b\\c\nd\u{1}é주"), "\"a\\\"b\\\\c\\nd\\u0001é주\"");
        assert_eq!(quote("a/b"), "\"a/b\"");
    }
}
