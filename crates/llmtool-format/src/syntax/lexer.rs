//! The tokenizer: turns source text into JSON tokens, reporting comments and malformed tokens as
//! diagnostics instead of stopping.

use std::borrow::Cow;

use crate::diagnostic::{Diagnostic, Edit};
use crate::span::Span;
use crate::syntax::codes;
use crate::syntax::escape::{self, Problem};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind<'a> {
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Colon,
    Comma,
    /// A string literal, already decoded: borrowed from the text when it holds no escape (the
    /// parser then copies it once, at its size, or keeps a short key inline), else made.
    String(Cow<'a, str>),
    /// A number as written (malformed ones are reported and kept).
    Number {
        raw: &'a str,
    },
    True,
    False,
    Null,
    /// A bare word that is not `true`, `false` or `null`.
    Ident(&'a str),
    /// A character that starts no token.
    Unknown(char),
    Eof,
}

impl TokenKind<'_> {
    /// How the token is named in messages: "`}`", "a string", "end of file".
    pub(crate) fn describe(&self) -> String {
        match self {
            TokenKind::LBrace => "`{`".into(),
            TokenKind::RBrace => "`}`".into(),
            TokenKind::LBracket => "`[`".into(),
            TokenKind::RBracket => "`]`".into(),
            TokenKind::Colon => "`:`".into(),
            TokenKind::Comma => "`,`".into(),
            TokenKind::String(_) => "a string".into(),
            TokenKind::Number { raw } => format!("`{raw}`"),
            TokenKind::True => "`true`".into(),
            TokenKind::False => "`false`".into(),
            TokenKind::Null => "`null`".into(),
            TokenKind::Ident(word) => format!("`{word}`"),
            TokenKind::Unknown(c) => format!("`{}`", c.escape_debug()),
            TokenKind::Eof => "the end of the file".into(),
        }
    }

    /// Whether a value can start with this token.
    pub(crate) fn starts_value(&self) -> bool {
        matches!(
            self,
            TokenKind::LBrace
                | TokenKind::LBracket
                | TokenKind::String(_)
                | TokenKind::Number { .. }
                | TokenKind::True
                | TokenKind::False
                | TokenKind::Null
                | TokenKind::Ident(_)
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token<'a> {
    pub(crate) kind: TokenKind<'a>,
    pub(crate) span: Span,
}

pub(crate) struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut pos = 0;
        if text.starts_with('\u{feff}') {
            pos = '\u{feff}'.len_utf8();
        }
        Self { text, bytes: text.as_bytes(), pos, diagnostics: Vec::new() }
    }

    pub(crate) fn next_token(&mut self) -> Token<'a> {
        self.skip_trivia();
        let start = self.pos;
        let Some(&byte) = self.bytes.get(start) else {
            return Token { kind: TokenKind::Eof, span: Span::empty(start) };
        };
        let kind = match byte {
            b'{' => self.single(TokenKind::LBrace),
            b'}' => self.single(TokenKind::RBrace),
            b'[' => self.single(TokenKind::LBracket),
            b']' => self.single(TokenKind::RBracket),
            b':' => self.single(TokenKind::Colon),
            b',' => self.single(TokenKind::Comma),
            b'"' | b'\'' => self.string(byte),
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.number(),
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' => self.word(),
            _ => {
                let c = self.text[start..].chars().next().unwrap_or('\u{fffd}');
                self.pos += c.len_utf8();
                TokenKind::Unknown(c)
            }
        };
        Token { kind, span: Span::new(start, self.pos) }
    }

    fn single(&mut self, kind: TokenKind<'a>) -> TokenKind<'a> {
        self.pos += 1;
        kind
    }

    /// Skips whitespace and comments; each comment is reported once.
    fn skip_trivia(&mut self) {
        loop {
            match self.bytes.get(self.pos) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') => match self.bytes.get(self.pos + 1) {
                    Some(b'/') => self.line_comment(),
                    Some(b'*') => self.block_comment(),
                    _ => return,
                },
                _ => return,
            }
        }
    }

    fn line_comment(&mut self) {
        let start = self.pos;
        let end =
            memchr::memchr(b'\n', &self.bytes[start..]).map_or(self.bytes.len(), |i| start + i);
        self.pos = end;
        self.report_comment(Span::new(start, end));
    }

    fn block_comment(&mut self) {
        let start = self.pos;
        match memchr::memmem::find(&self.bytes[start + 2..], b"*/") {
            Some(i) => {
                self.pos = start + 2 + i + 2;
                self.report_comment(Span::new(start, self.pos));
            }
            None => {
                self.pos = self.bytes.len();
                self.diagnostics.push(
                    Diagnostic::new(&codes::UNTERMINATED_COMMENT, "block comment is never closed")
                        .at_labelled(Span::new(start, start + 2), "comment opened here")
                        .with_help("close it with `*/`"),
                );
            }
        }
    }

    fn report_comment(&mut self, span: Span) {
        self.diagnostics.push(
            Diagnostic::new(&codes::COMMENT, "comments are not part of JSON")
                .at(span)
                .with_help("tools that read plain JSON will reject this file")
                .with_fix("remove the comment", vec![Edit::delete(span)]),
        );
    }

    /// Lexes a string; `quote` is `"` or, with an error, `'`.
    fn string(&mut self, quote: u8) -> TokenKind<'a> {
        let start = self.pos;
        self.pos += 1;
        // Most strings hold no escape: their value is their text.
        let plain_end = next_special(&self.bytes[self.pos..], quote) + self.pos;
        if quote == b'"' && self.bytes.get(plain_end) == Some(&b'"') {
            let value = &self.text[self.pos..plain_end];
            self.pos = plain_end + 1;
            return TokenKind::String(Cow::Borrowed(value));
        }
        let mut value = String::new();
        loop {
            let run_start = self.pos;
            let stop = next_special(&self.bytes[run_start..], quote) + run_start;
            value.push_str(&self.text[run_start..stop]);
            self.pos = stop;
            match self.bytes.get(stop) {
                Some(&b) if b == quote => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => self.escape(&mut value),
                Some(b'\n' | b'\r') | None => {
                    self.report_unterminated(start);
                    break;
                }
                Some(&control) => {
                    self.diagnostics.push(
                        Diagnostic::new(
                            &codes::CONTROL_CHARACTER,
                            format!(
                                "control character `{}` inside a string",
                                char::from(control).escape_default()
                            ),
                        )
                        .at(Span::new(stop, stop + 1))
                        .with_help("write it as an escape sequence")
                        .with_fix(
                            "escape the character",
                            vec![Edit::replace(Span::new(stop, stop + 1), escape_control(control))],
                        ),
                    );
                    value.push(char::from(control));
                    self.pos += 1;
                }
            }
        }
        if quote == b'\'' {
            let span = Span::new(start, self.pos);
            self.diagnostics.push(
                Diagnostic::new(&codes::SINGLE_QUOTED_STRING, "strings must use double quotes")
                    .at(span)
                    .with_fix(
                        "use double quotes",
                        vec![Edit::replace(span, crate::syntax::quote(&value))],
                    ),
            );
        }
        TokenKind::String(Cow::Owned(value))
    }

    fn report_unterminated(&mut self, start: usize) {
        self.diagnostics.push(
            Diagnostic::new(&codes::UNTERMINATED_STRING, "string is never closed")
                .at_labelled(Span::new(start, self.pos), "this string has no closing quote")
                .with_help("add a `\"` where the string ends; a line break inside a string is written `\\n`"),
        );
    }

    /// Decodes one escape sequence at `self.pos` (which is at the backslash).
    fn escape(&mut self, value: &mut String) {
        let start = self.pos;
        let read = escape::read(self.text, start);
        read.decoded.push_to(value);
        self.pos = read.end;
        let span = Span::new(start, read.end);
        match read.problem {
            None => {}
            Some(Problem::Invalid(c)) => self.diagnostics.push(
                Diagnostic::new(&codes::INVALID_ESCAPE, format!("invalid escape `\\{c}`"))
                    .at(span)
                    .with_help("valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX; a literal backslash is `\\\\`")
                    .with_fix("escape the backslash", vec![Edit::insert(start, "\\")]),
            ),
            Some(Problem::BadUnicode) => self.diagnostics.push(
                Diagnostic::new(&codes::INVALID_ESCAPE, "invalid unicode escape")
                    .at(span)
                    .with_help(
                        "`\\u` takes four hex digits; characters past U+FFFF take a surrogate pair",
                    ),
            ),
        }
    }

    fn number(&mut self) -> TokenKind<'a> {
        let start = self.pos;
        let end = self.bytes[start..]
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .map_or(self.bytes.len(), |i| start + i);
        self.pos = end;
        let raw = &self.text[start..end];
        if !is_json_number(raw) {
            let mut diagnostic = Diagnostic::new(
                &codes::INVALID_NUMBER,
                format!("invalid number `{raw}`"),
            )
            .at(Span::new(start, end))
            .with_help(
                "JSON numbers look like `12`, `-0.5` or `1e6`: no leading `+`, `.` or zeros",
            );
            if let Some(fixed) = repair_number(raw) {
                diagnostic = diagnostic.with_fix(
                    format!("write `{fixed}`"),
                    vec![Edit::replace(Span::new(start, end), fixed)],
                );
            }
            self.diagnostics.push(diagnostic);
        }
        TokenKind::Number { raw }
    }

    fn word(&mut self) -> TokenKind<'a> {
        let start = self.pos;
        let end = self.bytes[start..]
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$'))
            .map_or(self.bytes.len(), |i| start + i);
        self.pos = end;
        match &self.text[start..end] {
            "true" => TokenKind::True,
            "false" => TokenKind::False,
            "null" => TokenKind::Null,
            word => TokenKind::Ident(word),
        }
    }
}

fn escape_control(byte: u8) -> String {
    match byte {
        b'\t' => "\\t".into(),
        0x08 => "\\b".into(),
        0x0c => "\\f".into(),
        _ => format!("\\u{byte:04x}"),
    }
}

/// The offset of the first byte in `bytes` that ends a plain run inside a string: the closing
/// `quote`, a backslash or a control character (or `bytes.len()`).
///
/// Strings are most of a tool file (prompts, base64 avatars), so this is the lexer's hot loop:
/// memchr finds the quote or backslash, and the run before it is checked for control bytes by
/// its smallest byte: a minimum over bytes has no early exit and vectorizes (sixteen bytes an
/// instruction even on baseline x86-64, where counting widened each byte to a `usize`).
fn next_special(bytes: &[u8], quote: u8) -> usize {
    let end = memchr::memchr2(quote, b'\\', bytes).unwrap_or(bytes.len());
    let run = &bytes[..end];
    let has_control = run.iter().copied().min().is_some_and(|smallest| smallest < 0x20);
    if has_control { run.iter().position(|&b| b < 0x20).unwrap_or(end) } else { end }
}

/// Whether `raw` follows JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
pub(crate) fn is_json_number(raw: &str) -> bool {
    let b = raw.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let from = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - from
    };
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// The JSON spelling of a number written the JavaScript way (`+1`, `.5`, `1.`, `007`), if any.
fn repair_number(raw: &str) -> Option<String> {
    let (sign, body) = match raw.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", raw.strip_prefix('+').unwrap_or(raw)),
    };
    let mut body = body.to_owned();
    if body.starts_with('.') {
        body.insert(0, '0');
    }
    if body.ends_with('.') {
        body.push('0');
    }
    let int_len = body.find(['.', 'e', 'E']).unwrap_or(body.len());
    let trimmed = body[..int_len].trim_start_matches('0');
    let int_part = if trimmed.is_empty() { "0" } else { trimmed };
    let fixed = format!("{sign}{int_part}{}", &body[int_len..]);
    is_json_number(&fixed).then_some(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_number_grammar() {
        for ok in ["0", "-0", "12", "1.5", "-0.25e-3", "1E6"] {
            assert!(is_json_number(ok), "{ok}");
        }
        for bad in ["", "-", "01", "1.", ".5", "+1", "1e", "1.2.3", "--1"] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }

    #[test]
    fn javascript_numbers_get_a_json_spelling() {
        assert_eq!(repair_number("+1").as_deref(), Some("1"));
        assert_eq!(repair_number(".5").as_deref(), Some("0.5"));
        assert_eq!(repair_number("1.").as_deref(), Some("1.0"));
        assert_eq!(repair_number("007").as_deref(), Some("7"));
        assert_eq!(repair_number("1.2.3"), None);
    }
}
