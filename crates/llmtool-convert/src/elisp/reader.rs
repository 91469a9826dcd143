//! A reader for the part of Emacs Lisp that tool definitions are written in: lists, vectors,
//! strings with their escapes, numbers, symbols and keywords, `'x` and `#'x`. Anything else is
//! a located error.
//!
//! Written by hand: the Lisp crates (`lexpr` and others) read values without their positions,
//! and the diagnostics here must point at the text.

use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::span::Span;

use super::super::codes::INVALID_SOURCE;

/// One datum as read, with where it was.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    pub(crate) span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    List(Vec<Node>),
    Vector(Vec<Node>),
    Str(String),
    Integer(i64),
    Float(f64),
    /// A symbol's name as the reader makes it (escapes removed); keywords keep their `:`.
    Symbol(String),
}

impl Node {
    pub(crate) fn symbol(&self) -> Option<&str> {
        match &self.kind {
            Kind::Symbol(name) => Some(name),
            _ => None,
        }
    }

    /// Whether this is the symbol `nil` (or `()`, which reads as the same object).
    pub(crate) fn is_nil(&self) -> bool {
        match &self.kind {
            Kind::Symbol(name) => name == "nil",
            Kind::List(items) => items.is_empty(),
            _ => false,
        }
    }

    pub(crate) fn is_keyword(&self) -> bool {
        self.symbol().is_some_and(|name| name.starts_with(':'))
    }
}

/// The heads of the forms that `` `x ``, `,x` and `,@x` read as.
pub(crate) const BACKQUOTE: &str = "`";
pub(crate) const COMMA: &str = ",";
pub(crate) const SPLICE: &str = ",@";

/// Lists deeper than this are refused rather than risking the stack.
const MAX_DEPTH: usize = 200;

/// Reads every datum in `text`.
pub(crate) fn read_all(text: &str) -> Result<Vec<Node>, Box<Diagnostic>> {
    let mut reader = Reader { text, position: 0, depth: 0 };
    let mut nodes = Vec::new();
    loop {
        reader.skip_blank();
        if reader.position >= text.len() {
            return Ok(nodes);
        }
        nodes.push(reader.datum()?);
    }
}

struct Reader<'a> {
    text: &'a str,
    position: usize,
    depth: usize,
}

/// Characters that end a symbol or number.
fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | '"' | '\'' | ';' | '`' | ',')
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.position..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.position += c.len_utf8();
        Some(c)
    }

    fn error(&self, start: usize, message: impl Into<String>) -> Box<Diagnostic> {
        let end = (start + 1).min(self.text.len()).max(start);
        let end = (end..=self.text.len()).find(|&i| self.text.is_char_boundary(i)).unwrap_or(end);
        Box::new(Diagnostic::new(&INVALID_SOURCE, message).at(Span::new(start, end)))
    }

    /// Skips white space and `;` comments.
    fn skip_blank(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.bump();
            } else if c == ';' {
                while let Some(c) = self.bump() {
                    if c == '\n' {
                        break;
                    }
                }
            } else {
                break;
            }
        }
    }

    fn datum(&mut self) -> Result<Node, Box<Diagnostic>> {
        self.skip_blank();
        let start = self.position;
        let Some(c) = self.peek() else {
            return Err(self.error(start, "the text ends where a value was expected"));
        };
        match c {
            '(' => self.sequence(')').map(|items| Node {
                kind: Kind::List(items),
                span: Span::new(start, self.position),
            }),
            '[' => self.sequence(']').map(|items| Node {
                kind: Kind::Vector(items),
                span: Span::new(start, self.position),
            }),
            ')' | ']' => Err(self.error(start, format!("`{c}` closes nothing"))),
            '"' => self.string(),
            '\'' => {
                self.bump();
                self.quoted("quote", start)
            }
            '#' if self.text[start..].starts_with("#'") => {
                self.position += 2;
                self.quoted("function", start)
            }
            // Read as Emacs reads them, so that a form never evaluated (a `:function`) may
            // hold them; where a value is needed, they are refused.
            '`' => {
                self.bump();
                self.quoted(BACKQUOTE, start)
            }
            ',' if self.text[start..].starts_with(",@") => {
                self.position += 2;
                self.quoted(SPLICE, start)
            }
            ',' => {
                self.bump();
                self.quoted(COMMA, start)
            }
            '?' => Err(self.error(start, "character literals (`?a`) are not read here")),
            '#' => Err(self.error(start, "this `#` syntax is not read here")),
            _ => self.atom(),
        }
    }

    /// `'x` as `(quote x)`, `#'x` as `(function x)`.
    fn quoted(&mut self, head: &str, start: usize) -> Result<Node, Box<Diagnostic>> {
        let head = Node { kind: Kind::Symbol(head.into()), span: Span::new(start, self.position) };
        self.enter(start)?;
        let datum = self.datum();
        self.depth -= 1;
        let datum = datum?;
        let span = Span::new(start, datum.span.end);
        Ok(Node { kind: Kind::List(vec![head, datum]), span })
    }

    fn enter(&mut self, start: usize) -> Result<(), Box<Diagnostic>> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(start, format!("nested more than {MAX_DEPTH} deep")));
        }
        Ok(())
    }

    fn sequence(&mut self, close: char) -> Result<Vec<Node>, Box<Diagnostic>> {
        let start = self.position;
        self.bump();
        self.enter(start)?;
        let mut items = Vec::new();
        loop {
            self.skip_blank();
            match self.peek() {
                None => {
                    return Err(
                        self.error(start, format!("this is never closed: `{close}` is missing"))
                    );
                }
                Some(c) if c == close => {
                    self.bump();
                    self.depth -= 1;
                    return Ok(items);
                }
                Some(c @ (')' | ']')) => {
                    return Err(
                        self.error(self.position, format!("`{c}` where `{close}` was expected"))
                    );
                }
                Some(_) => {
                    let item = self.datum()?;
                    if item.kind == Kind::Symbol(".".into()) && item.span.len() == 1 {
                        return Err(self.error(item.span.start, "dotted pairs are not read here"));
                    }
                    items.push(item);
                }
            }
        }
    }

    fn string(&mut self) -> Result<Node, Box<Diagnostic>> {
        let start = self.position;
        self.bump();
        let mut out = String::new();
        loop {
            let here = self.position;
            match self.bump() {
                None => return Err(self.error(start, "this string is never closed")),
                Some('"') => break,
                Some('\\') => {
                    if let Some(c) = self.escape(here)? {
                        out.push(c);
                    }
                }
                Some(c) => out.push(c),
            }
        }
        Ok(Node { kind: Kind::Str(out), span: Span::new(start, self.position) })
    }

    /// The character a string escape stands for (`None` for the escapes that stand for nothing).
    fn escape(&mut self, start: usize) -> Result<Option<char>, Box<Diagnostic>> {
        let Some(c) = self.bump() else {
            return Err(self.error(start, "the text ends inside an escape"));
        };
        let simple = match c {
            'a' => '\u{7}',
            'b' => '\u{8}',
            't' => '\t',
            'n' => '\n',
            'v' => '\u{b}',
            'f' => '\u{c}',
            'r' => '\r',
            'e' => '\u{1b}',
            's' => ' ',
            'd' => '\u{7f}',
            // A backslash before a newline or a space is dropped.
            '\n' | ' ' => return Ok(None),
            'x' => return self.code_point(start, 16, 1, usize::MAX).map(Some),
            'u' => return self.code_point(start, 16, 4, 4).map(Some),
            'U' => return self.code_point(start, 16, 8, 8).map(Some),
            '0'..='7' => {
                self.position -= 1;
                return self.code_point(start, 8, 1, 3).map(Some);
            }
            'N' => return self.named(start).map(Some),
            'C' | 'M' | 'S' | 'H' | 'A' | '^' => {
                return Err(self.error(start, format!("the `\\{c}` key escape is not read here")));
            }
            other => other,
        };
        Ok(Some(simple))
    }

    /// `min..=max` digits in `radix` as one character.
    fn code_point(
        &mut self,
        start: usize,
        radix: u32,
        min: usize,
        max: usize,
    ) -> Result<char, Box<Diagnostic>> {
        let digits_start = self.position;
        let mut count = 0;
        while count < max && self.peek().is_some_and(|c| c.is_digit(radix)) {
            self.bump();
            count += 1;
        }
        let digits = &self.text[digits_start..self.position];
        if count < min {
            return Err(self.error(start, "this escape needs more digits"));
        }
        u32::from_str_radix(digits, radix)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| self.error(start, format!("`{digits}` is not a character")))
    }

    /// `\N{U+XXXX}`; names of characters are not known here.
    fn named(&mut self, start: usize) -> Result<char, Box<Diagnostic>> {
        let rest = &self.text[self.position..];
        let Some(body) = rest.strip_prefix("{U+").and_then(|r| r.split_once('}')).map(|(b, _)| b)
        else {
            return Err(self.error(start, "only `\\N{U+XXXX}` is read here, not character names"));
        };
        let c = u32::from_str_radix(body, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| self.error(start, format!("`{body}` is not a character")))?;
        self.position += "{U+".len() + body.len() + 1;
        Ok(c)
    }

    /// A symbol or a number.
    fn atom(&mut self) -> Result<Node, Box<Diagnostic>> {
        let start = self.position;
        let mut name = String::new();
        let mut escaped = false;
        while let Some(c) = self.peek() {
            if is_delimiter(c) {
                break;
            }
            self.bump();
            if c == '\\' {
                escaped = true;
                match self.bump() {
                    Some(c) => name.push(c),
                    None => return Err(self.error(start, "the text ends inside a symbol")),
                }
            } else {
                name.push(c);
            }
        }
        let span = Span::new(start, self.position);
        if !escaped && let Some(number) = number(&name) {
            return Ok(Node { kind: number, span });
        }
        Ok(Node { kind: Kind::Symbol(name), span })
    }
}

/// Whether Emacs reads `token` (unescaped) as a number.
pub(crate) fn is_number(token: &str) -> bool {
    number(token).is_some()
}

/// The number `token` spells in Emacs Lisp, if it is one: `1`, `-2`, `3.` (integers), `1.5`,
/// `.5`, `1e3`, `-1.5e-3` (floats).
fn number(token: &str) -> Option<Kind> {
    let unsigned = token.strip_prefix(['+', '-']).unwrap_or(token);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let integer = unsigned.strip_suffix('.').unwrap_or(unsigned);
    if digits(integer) {
        let text = token.strip_suffix('.').unwrap_or(token);
        return text.parse().ok().map(Kind::Integer).or_else(|| text.parse().ok().map(Kind::Float));
    }
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (unsigned, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((whole, fraction)) => {
            (whole.is_empty() || digits(whole)) && digits(fraction)
                || digits(whole) && fraction.is_empty() && exponent.is_some()
        }
        None => digits(mantissa) && exponent.is_some(),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    (mantissa_ok && exponent_ok).then(|| token.parse().ok().map(Kind::Float)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Kind {
        let mut nodes = read_all(text).unwrap();
        assert_eq!(nodes.len(), 1, "{text}");
        nodes.remove(0).kind
    }

    fn error(text: &str) -> String {
        read_all(text).unwrap_err().message
    }

    #[test]
    fn numbers_follow_emacs() {
        assert_eq!(one("12"), Kind::Integer(12));
        assert_eq!(one("-3."), Kind::Integer(-3));
        assert_eq!(one("+7"), Kind::Integer(7));
        assert_eq!(one("1.5"), Kind::Float(1.5));
        assert_eq!(one(".5"), Kind::Float(0.5));
        assert_eq!(one("1e3"), Kind::Float(1000.0));
        assert_eq!(one("-2.5e-1"), Kind::Float(-0.25));
        assert_eq!(one("1.e2"), Kind::Float(100.0));
        assert_eq!(one("1-2"), Kind::Symbol("1-2".into()));
        assert_eq!(one("e3"), Kind::Symbol("e3".into()));
        assert_eq!(one("\\12"), Kind::Symbol("12".into()));
        assert_eq!(one("99999999999999999999"), Kind::Float(1e20));
    }

    #[test]
    fn strings_keep_every_escape() {
        assert_eq!(one(r#""a\"b\\c\nd""#), Kind::Str("a\"b\\c\nd".into()));
        assert_eq!(one(r#""\x41\ B\101\u00e9\N{U+1F600}\s""#), Kind::Str("ABAé😀 ".into()));
        assert_eq!(one("\"line\\\nnext\""), Kind::Str("linenext".into()));
        assert_eq!(one("\"é 한\""), Kind::Str("é 한".into()));
    }

    #[test]
    fn quotes_become_forms() {
        let Kind::List(items) = one("'(a b)") else { panic!() };
        assert_eq!(items[0].symbol(), Some("quote"));
        let Kind::List(items) = one("#'identity") else { panic!() };
        assert_eq!(items[0].symbol(), Some("function"));
        assert_eq!(items[1].symbol(), Some("identity"));
    }

    #[test]
    fn anything_else_is_located() {
        assert!(error("(a . b)").contains("dotted"));
        assert!(read_all("`(a ,b ,@c)").is_ok(), "read, for forms never evaluated");
        assert!(error("?a").contains("character"));
        assert!(error("(list \"a\"").contains("never closed"));
        assert!(error("\"abc").contains("never closed"));
        assert!(error("a)").contains("closes nothing"));
        assert!(error("(a]").contains("expected"));
        assert!(error(&"(".repeat(500)).contains("nested"));
        assert!(error("\"\\N{LATIN SMALL LETTER A}\"").contains("names"));
        let problem = read_all("(list\n  #s(x))").unwrap_err();
        assert_eq!(problem.primary.unwrap().span.start, 8);
    }
}
