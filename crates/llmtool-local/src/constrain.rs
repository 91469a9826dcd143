//! Constrained decoding: a mask over the vocabulary so that only tokens that keep the answer
//! valid can be picked. `OneOf` spells exactly one of the allowed values; `Json` produces a JSON
//! object or array; `Calls` leaves the text free and keeps the JSON of each function call the
//! model opens well-formed.
//!
//! The JSON grammar is a hand-written prefix automaton rather than `llguidance`: the grammar is
//! fixed and small, and its state is a `Copy` value of a few dozen bytes, so testing every token
//! of the vocabulary at each step needs no allocation; a general grammar engine would bring a
//! large dependency for this one grammar.

/// The grammar the answer must follow: the token mask of constrained decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grammar {
    /// Exactly one of these strings, then the end.
    OneOf { values: Vec<Vec<u8>>, written: Vec<u8> },
    /// A JSON object or array, then the end.
    Json(JsonState),
    /// Free text, in which each `<tool_call>` is followed by a JSON document (a lazy grammar:
    /// it constrains nothing until the model opens a call).
    Calls(CallState),
}

/// Where an answer that may call functions is: in free text (with its last bytes, to see a
/// call open across tokens), or in a call's JSON. A call opens with `<tool_call>`, or with
/// `{` where only white space came before it since the start or the last call (a call
/// without tags, which small models write).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallState {
    tail: Vec<u8>,
    json: Option<JsonState>,
    at_start: bool,
}

impl Default for CallState {
    fn default() -> Self {
        CallState { tail: Vec::new(), json: None, at_start: true }
    }
}

impl Grammar {
    pub fn one_of(values: &[String]) -> Self {
        Grammar::OneOf {
            values: values.iter().map(|v| v.as_bytes().to_vec()).collect(),
            written: Vec::new(),
        }
    }

    pub fn json() -> Self {
        Grammar::Json(JsonState::default())
    }

    pub fn calls() -> Self {
        Grammar::Calls(CallState::default())
    }

    /// Whether any token may come next, so that no mask is needed.
    pub fn is_free(&self) -> bool {
        matches!(self, Grammar::Calls(CallState { json: None, at_start: false, .. }))
    }

    /// Marks in `mask` the tokens that may come next (`vocab[id]` is a token's bytes; end tokens
    /// are allowed only when the answer is complete).
    pub fn mask(&self, vocab: &[Vec<u8>], eos: &[u32], mask: &mut [bool]) {
        for (id, (allowed, bytes)) in mask.iter_mut().zip(vocab).enumerate() {
            *allowed = if eos.contains(&(id as u32)) {
                self.complete()
            } else {
                !bytes.is_empty() && self.accepts(bytes)
            };
        }
    }

    /// Whether `bytes` may follow what was written.
    pub fn accepts(&self, bytes: &[u8]) -> bool {
        match self {
            Grammar::OneOf { values, written } => values.iter().any(|value| {
                value.len() >= written.len() + bytes.len()
                    && value.starts_with(written)
                    && value[written.len()..].starts_with(bytes)
            }),
            Grammar::Json(state) => {
                let mut next = *state;
                bytes.iter().all(|&b| next.feed(b))
            }
            Grammar::Calls(state) => state.accepts(bytes),
        }
    }

    /// Records a chosen token's bytes.
    pub fn advance(&mut self, bytes: &[u8]) {
        match self {
            Grammar::OneOf { written, .. } => written.extend_from_slice(bytes),
            Grammar::Json(state) => {
                for &b in bytes {
                    state.feed(b);
                }
            }
            Grammar::Calls(state) => {
                for &b in bytes {
                    state.feed(b);
                }
            }
        }
    }

    /// Text that completes the answer when generation must stop early (JSON only: the shortest
    /// closing; allowed values cannot be completed safely, so nothing).
    pub fn closing(&self) -> String {
        match self {
            Grammar::Json(state) => state.closing(),
            Grammar::Calls(CallState { json: Some(json), .. }) => {
                format!("{}\n{}", json.closing(), crate::calls::CLOSE)
            }
            Grammar::OneOf { .. } | Grammar::Calls(_) => String::new(),
        }
    }

    /// Whether the answer may end here.
    pub fn complete(&self) -> bool {
        match self {
            Grammar::OneOf { values, written } => values.iter().any(|v| v == written),
            Grammar::Json(state) => state.is_complete(),
            // Not in the middle of a call's JSON.
            Grammar::Calls(state) => state.json.is_none(),
        }
    }
}

impl CallState {
    /// The most bytes of free text kept: enough to see `<tool_call>` split across tokens.
    const TAIL: usize = crate::calls::OPEN.len();

    fn accepts(&self, bytes: &[u8]) -> bool {
        let may_open = bytes.contains(&b'<') || self.tail.contains(&b'<') || self.at_start;
        if self.json.is_none() && !may_open {
            // No call can open in these bytes: the common case, decided without a copy.
            return true;
        }
        let mut next = self.clone();
        bytes.iter().all(|&b| next.feed(b))
    }

    /// Takes one byte; `false` if a call's JSON cannot continue this way.
    fn feed(&mut self, byte: u8) -> bool {
        match &mut self.json {
            Some(json) => {
                if !json.feed(byte) {
                    return false;
                }
                if json.is_complete() {
                    self.json = None;
                    self.at_start = true;
                }
                true
            }
            None if self.at_start && byte == b'{' => {
                let mut json = JsonState::default();
                let opened = json.feed(byte);
                self.json = Some(json);
                self.at_start = false;
                opened
            }
            None => {
                self.at_start &= byte.is_ascii_whitespace();
                self.tail.push(byte);
                if self.tail.len() > Self::TAIL {
                    self.tail.remove(0);
                }
                if self.tail.ends_with(crate::calls::OPEN.as_bytes()) {
                    self.tail.clear();
                    self.json = Some(JsonState::default());
                }
                true
            }
        }
    }
}

const MAX_DEPTH: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A value is due (after `:`, `,` in an array, `[`, or at the start).
    Value,
    /// After `{` or `,` in an object: a key is due (or `}` right after `{`).
    Key { first: bool },
    /// After a key: `:` is due.
    Colon,
    /// After a value: `,` or the closing bracket is due (or nothing, at the top).
    After,
    /// Inside a string.
    Str { key: bool, escape: u8 },
    /// Inside a number, at `stage` (see `Number`).
    Num(Number),
    /// Inside `true`, `false` or `null`: the bytes still due.
    Literal { word: &'static [u8], at: u8 },
    /// After `[`: a value or `]` is due.
    ArrayStart,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Number {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigits,
}

/// The state of a JSON prefix (a few dozen bytes, `Copy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonState {
    /// `true` for an object, `false` for an array, per open container.
    stack: [bool; MAX_DEPTH],
    depth: u8,
    mode: Mode,
    started: bool,
}

impl Default for JsonState {
    fn default() -> Self {
        Self { stack: [false; MAX_DEPTH], depth: 0, mode: Mode::Value, started: false }
    }
}

impl JsonState {
    pub fn is_complete(&self) -> bool {
        self.started && self.depth == 0 && self.mode == Mode::After
    }

    /// The shortest text that makes this prefix a complete document: used when the token budget
    /// runs out, so a JSON answer is always whole.
    pub fn closing(&self) -> String {
        let mut out = String::new();
        let mut mode = self.mode;
        if let Mode::Str { key, escape } = mode {
            match escape {
                1 => out.push('n'),
                2..=5 => out.push_str(&"0".repeat(usize::from(6 - escape))),
                _ => {}
            }
            out.push('"');
            mode = if key { Mode::Colon } else { Mode::After };
        }
        match mode {
            Mode::Num(Number::Minus | Number::Dot | Number::Exp | Number::ExpSign) => out.push('0'),
            Mode::Literal { word, at } => {
                out.push_str(std::str::from_utf8(&word[usize::from(at)..]).unwrap_or(""))
            }
            Mode::Colon => out.push_str(": null"),
            Mode::Key { first: false } => out.push_str("\"\": null"),
            Mode::Value if self.depth > 0 => out.push_str("null"),
            _ => {}
        }
        for level in (0..usize::from(self.depth)).rev() {
            out.push(if self.stack[level] { '}' } else { ']' });
        }
        if !self.started {
            out.push_str("{}");
        }
        out
    }

    fn in_object(&self) -> bool {
        self.depth > 0 && self.stack[usize::from(self.depth) - 1]
    }

    fn open(&mut self, object: bool) -> bool {
        if usize::from(self.depth) == MAX_DEPTH {
            return false;
        }
        self.stack[usize::from(self.depth)] = object;
        self.depth += 1;
        self.started = true;
        self.mode = if object { Mode::Key { first: true } } else { Mode::ArrayStart };
        true
    }

    fn close(&mut self, object: bool) -> bool {
        if self.depth == 0 || self.in_object() != object {
            return false;
        }
        self.depth -= 1;
        self.mode = Mode::After;
        true
    }

    /// Takes one byte; `false` if no JSON document can continue this way.
    pub fn feed(&mut self, byte: u8) -> bool {
        let whitespace = matches!(byte, b' ' | b'\n' | b'\t' | b'\r');
        match self.mode {
            Mode::Str { key, escape } => self.string(byte, key, escape),
            Mode::Num(stage) => self.number(byte, stage),
            Mode::Literal { word, at } => {
                if word[usize::from(at)] != byte {
                    return false;
                }
                self.mode = if usize::from(at) + 1 == word.len() {
                    Mode::After
                } else {
                    Mode::Literal { word, at: at + 1 }
                };
                true
            }
            _ if whitespace => self.started || self.mode == Mode::Value,
            Mode::Value | Mode::ArrayStart => {
                if self.mode == Mode::ArrayStart && byte == b']' {
                    return self.close(false);
                }
                if !self.started {
                    // The document is an object or an array.
                    return matches!(byte, b'{' | b'[') && self.open(byte == b'{');
                }
                self.value(byte)
            }
            Mode::Key { first } => match byte {
                b'"' => {
                    self.mode = Mode::Str { key: true, escape: 0 };
                    true
                }
                b'}' if first => self.close(true),
                _ => false,
            },
            Mode::Colon => {
                if byte == b':' {
                    self.mode = Mode::Value;
                }
                byte == b':'
            }
            Mode::After => match byte {
                b',' if self.depth > 0 => {
                    self.mode =
                        if self.in_object() { Mode::Key { first: false } } else { Mode::Value };
                    true
                }
                b'}' => self.close(true),
                b']' => self.close(false),
                _ => false,
            },
        }
    }

    fn value(&mut self, byte: u8) -> bool {
        match byte {
            b'{' | b'[' => self.open(byte == b'{'),
            b'"' => {
                self.mode = Mode::Str { key: false, escape: 0 };
                true
            }
            b'-' => {
                self.mode = Mode::Num(Number::Minus);
                true
            }
            b'0' => {
                self.mode = Mode::Num(Number::Zero);
                true
            }
            b'1'..=b'9' => {
                self.mode = Mode::Num(Number::Int);
                true
            }
            b't' | b'f' | b'n' => {
                let word: &'static [u8] = match byte {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                self.mode = Mode::Literal { word, at: 1 };
                true
            }
            _ => false,
        }
    }

    /// `escape`: 0 none, 1 after `\`, 2..=5 hex digits of `\u` still due (5 - escape + 1).
    fn string(&mut self, byte: u8, key: bool, escape: u8) -> bool {
        match escape {
            0 => match byte {
                b'"' => {
                    self.mode = if key { Mode::Colon } else { Mode::After };
                    true
                }
                b'\\' => {
                    self.mode = Mode::Str { key, escape: 1 };
                    true
                }
                0..=0x1f => false,
                _ => true,
            },
            1 => match byte {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                    self.mode = Mode::Str { key, escape: 0 };
                    true
                }
                b'u' => {
                    self.mode = Mode::Str { key, escape: 2 };
                    true
                }
                _ => false,
            },
            n => {
                if !byte.is_ascii_hexdigit() {
                    return false;
                }
                self.mode = Mode::Str { key, escape: if n == 5 { 0 } else { n + 1 } };
                true
            }
        }
    }

    fn number(&mut self, byte: u8, stage: Number) -> bool {
        use Number::{Dot, Exp, ExpDigits, ExpSign, Frac, Int, Minus, Zero};
        let next = match (stage, byte) {
            (Minus, b'0') => Some(Zero),
            (Minus, b'1'..=b'9') | (Int, b'0'..=b'9') => Some(Int),
            (Zero | Int, b'.') => Some(Dot),
            (Dot | Frac, b'0'..=b'9') => Some(Frac),
            (Zero | Int | Frac, b'e' | b'E') => Some(Exp),
            (Exp, b'+' | b'-') => Some(ExpSign),
            (Exp | ExpSign | ExpDigits, b'0'..=b'9') => Some(ExpDigits),
            _ => None,
        };
        if let Some(next) = next {
            self.mode = Mode::Num(next);
            return true;
        }
        // The number ended: it must be complete, and the byte must fit what follows a value.
        if matches!(stage, Zero | Int | Frac | ExpDigits) {
            self.mode = Mode::After;
            return self.feed(byte);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feeds(text: &str) -> Option<JsonState> {
        let mut state = JsonState::default();
        text.bytes().all(|b| state.feed(b)).then_some(state)
    }

    #[test]
    fn accepts_json_documents_and_their_prefixes() {
        for document in [
            r#"{"a": [1, -2.5e3, true, null, "x\"\u00e9"], "b": {}}"#,
            "[]",
            "[ {\"k\": false} ]",
            "{}",
        ] {
            let state = feeds(document).unwrap_or_else(|| panic!("{document}"));
            assert!(state.is_complete(), "{document}");
            for cut in 1..document.len() {
                assert!(feeds(&document[..cut]).is_some(), "prefix {cut} of {document}");
            }
        }
    }

    #[test]
    fn rejects_what_no_document_continues() {
        for bad in [
            "1",
            "\"top\"",
            "{a",
            "{\"a\" 1",
            "[1,]",
            "[01]",
            "{\"a\":tru3}",
            "[\"\n\"]",
            "{}}",
            "[1 2]",
            "{\"a\":1,}",
        ] {
            assert!(
                feeds(bad).is_none_or(|s| !s.is_complete() && bad.ends_with(['}', ']'])),
                "{bad:?} accepted"
            );
        }
        assert!(!feeds("{\"a\": 1").unwrap().is_complete());
    }

    #[test]
    fn every_prefix_closes_into_a_document() {
        let document = r#"{"a": [1, -2.5e-3, true, null, "x\"\u00e9y"], "b": {"c": fals"#;
        for cut in 0..=document.len() {
            let state = feeds(&document[..cut]).unwrap();
            let closed = format!("{}{}", &document[..cut], state.closing());
            assert!(serde_json::from_str::<serde_json::Value>(&closed).is_ok(), "{closed:?}");
        }
    }

    #[test]
    fn one_of_spells_an_allowed_value() {
        let mut constraint = Grammar::one_of(&["go".into(), "good".into(), "stop".into()]);
        assert!(constraint.accepts(b"go") && constraint.accepts(b"s") && !constraint.accepts(b"x"));
        constraint.advance(b"go");
        assert!(constraint.complete());
        assert!(constraint.accepts(b"od") && !constraint.accepts(b"ne"));
        let vocab = vec![b"od".to_vec(), b"x".to_vec(), Vec::new()];
        let mut mask = vec![false; 3];
        constraint.mask(&vocab, &[2], &mut mask);
        assert_eq!(mask, [true, false, true], "the end token is allowed once `go` is complete");
    }

    #[test]
    fn calls_leave_text_free_and_keep_each_calls_json_whole() {
        let mut constraint = Grammar::calls();
        assert!(!constraint.is_free() && constraint.complete(), "a call may open at the start");
        constraint.advance(b"Let me check. <tool");
        assert!(constraint.is_free());
        // The call opens across tokens; then only JSON may follow, and the end is refused.
        assert!(!constraint.accepts(b"_call>oops"));
        constraint.advance(b"_call>");
        assert!(!constraint.is_free() && !constraint.complete());
        assert!(constraint.accepts(b"\n{\"name\"") && !constraint.accepts(b"name"));
        let vocab = vec![b"{".to_vec(), b"x".to_vec(), Vec::new()];
        let mut mask = vec![false; 3];
        constraint.mask(&vocab, &[2], &mut mask);
        assert_eq!(mask, [true, false, false]);
        constraint.advance(b"\n{\"name\": \"web_search\", \"arguments\": {\"query\": \"ra");
        assert_eq!(constraint.closing(), "\"}}\n</tool_call>");
        constraint.advance(b"in\"}}");
        // The call's JSON is whole: the answer may end, or go on.
        assert!(constraint.complete());
        assert!(constraint.accepts(b"\n</tool_call>"));
        constraint.advance(b"\n</tool_call>\nDone.");
        assert!(constraint.is_free());
    }

    #[test]
    fn a_call_without_tags_at_the_start_is_kept_whole_too() {
        let mut constraint = Grammar::calls();
        constraint.advance(b"\n");
        assert!(constraint.accepts(b"{\"name\"") && !constraint.accepts(b"{ name"));
        constraint.advance(b"{\"name\": \"f\", ");
        assert!(!constraint.complete());
        constraint.advance(b"\"arguments\": {}}");
        // Right after a call, another may open the same way; after words, `{` is text.
        assert!(constraint.complete() && !constraint.accepts(b"{ x"));
        constraint.advance(b"\nSo {x");
        assert!(constraint.is_free());
    }
}
