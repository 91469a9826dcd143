//! One escape sequence of a string literal, read the single way that both the lexer (which
//! decodes the value) and [`super::literal::Escapes`] (which maps the value back to the
//! source) use, so that a span inside a decoded string always lands where the lexer read it.

/// What an escape decodes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// A backslash at the very end of the text: nothing.
    Nothing,
    /// One character (`\n`, `\u00e9`, a surrogate pair, or U+FFFD for a bad `\u`).
    Char(char),
    /// An invalid escape such as `\q`, kept as written: the backslash and the character.
    Kept(char),
}

impl Decoded {
    pub(crate) fn push_to(self, value: &mut String) {
        match self {
            Decoded::Nothing => {}
            Decoded::Char(c) => value.push(c),
            Decoded::Kept(c) => {
                value.push('\\');
                value.push(c);
            }
        }
    }

    /// Its length in the decoded value, in bytes.
    pub(crate) fn len_utf8(self) -> usize {
        match self {
            Decoded::Nothing => 0,
            Decoded::Char(c) => c.len_utf8(),
            Decoded::Kept(c) => 1 + c.len_utf8(),
        }
    }
}

/// What is wrong with an escape, for the lexer's diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Problem {
    /// A backslash before a character that has no escape (`\q`).
    Invalid(char),
    /// `\u` without four hex digits, a high surrogate without its low one, or a lone low one.
    BadUnicode,
}

/// One escape: what it decodes to, the offset just past it, and what is wrong with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Escape {
    pub decoded: Decoded,
    pub end: usize,
    pub problem: Option<Problem>,
}

/// Reads the escape whose backslash is at byte `start` of `text`.
pub(crate) fn read(text: &str, start: usize) -> Escape {
    let plain = |c: char| Escape { decoded: Decoded::Char(c), end: start + 2, problem: None };
    let Some(letter) = text.get(start + 1..).and_then(|rest| rest.chars().next()) else {
        return Escape { decoded: Decoded::Nothing, end: start + 1, problem: None };
    };
    match letter {
        '"' => plain('"'),
        '\\' => plain('\\'),
        '/' => plain('/'),
        'b' => plain('\u{8}'),
        'f' => plain('\u{c}'),
        'n' => plain('\n'),
        'r' => plain('\r'),
        't' => plain('\t'),
        'u' => unicode(text, start),
        other => Escape {
            decoded: Decoded::Kept(other),
            end: start + 1 + other.len_utf8(),
            problem: Some(Problem::Invalid(other)),
        },
    }
}

/// `\uXXXX`, or a surrogate pair `\uD83D\uDE00`.
fn unicode(text: &str, start: usize) -> Escape {
    let bad = |end: usize| Escape {
        decoded: Decoded::Char('\u{fffd}'),
        end,
        problem: Some(Problem::BadUnicode),
    };
    let Some(high) = hex4(text, start + 2) else {
        // Only the hex digits that are there belong to the broken escape, never a quote.
        let digits = text.as_bytes()[start + 2..].iter().take(4);
        return bad(start + 2 + digits.take_while(|b| b.is_ascii_hexdigit()).count());
    };
    let after_high = start + 6;
    let code = if (0xD800..0xDC00).contains(&high) {
        let low = (text.as_bytes().get(after_high..after_high + 2) == Some(b"\\u"))
            .then(|| hex4(text, after_high + 2))
            .flatten()
            .filter(|low| (0xDC00..0xE000).contains(low));
        match low {
            Some(low) => {
                let pair = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                return char::from_u32(pair).map_or_else(
                    || bad(after_high + 6),
                    |c| Escape { decoded: Decoded::Char(c), end: after_high + 6, problem: None },
                );
            }
            None => return bad(after_high),
        }
    } else {
        high
    };
    match char::from_u32(code) {
        Some(c) => Escape { decoded: Decoded::Char(c), end: after_high, problem: None },
        None => bad(after_high),
    }
}

/// Four hex digits at `at` (no sign, unlike `from_str_radix` alone).
fn hex4(text: &str, at: usize) -> Option<u32> {
    let digits = text.get(at..at + 4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(text: &str) -> (String, usize, Option<Problem>) {
        let escape = read(text, 0);
        let mut value = String::new();
        escape.decoded.push_to(&mut value);
        assert_eq!(value.len(), escape.decoded.len_utf8());
        (value, escape.end, escape.problem)
    }

    #[test]
    fn reads_each_kind_of_escape() {
        assert_eq!(decoded(r"\n rest"), ("\n".to_owned(), 2, None));
        assert_eq!(decoded(r"\u00e9!"), ("é".to_owned(), 6, None));
        assert_eq!(decoded(r"\ud83d\ude00!"), ("😀".to_owned(), 12, None));
        assert_eq!(decoded("\\"), (String::new(), 1, None));
        assert_eq!(decoded(r"\q"), ("\\q".to_owned(), 2, Some(Problem::Invalid('q'))));
        assert_eq!(decoded(r"\é"), ("\\é".to_owned(), 3, Some(Problem::Invalid('é'))));
    }

    #[test]
    fn a_broken_unicode_escape_keeps_only_its_own_digits() {
        let bad = Some(Problem::BadUnicode);
        // Not hex: only `\u` and the digits before the first non-digit.
        assert_eq!(decoded(r#"\u12"}"#), ("\u{fffd}".to_owned(), 4, bad));
        assert_eq!(decoded(r"\uéé{{n}}"), ("\u{fffd}".to_owned(), 2, bad));
        assert_eq!(decoded(r"\u+0e9"), ("\u{fffd}".to_owned(), 2, bad));
        // A high surrogate without a low one, and a lone low one: the four digits.
        assert_eq!(decoded(r"\ud83d\u00e9"), ("\u{fffd}".to_owned(), 6, bad));
        assert_eq!(decoded(r"\ude00x"), ("\u{fffd}".to_owned(), 6, bad));
    }
}
