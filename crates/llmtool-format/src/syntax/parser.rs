//! The error-recovering JSON parser.
//!
//! Written by hand rather than taken from `jsonc-parser` or `serde_json` because a checker needs
//! what those stop short of: it must go on after the first problem (to report every trailing or
//! missing comma of a file in one run, with a fix for each), and it must not recurse per nesting
//! level (200,000 nested arrays would overflow the stack). The parser keeps its own stack of open
//! objects and arrays, and stops building the tree past [`MAX_DEPTH`].

use crate::diagnostic::{Diagnostic, Edit};
use crate::span::Span;
use crate::syntax::ast::{Key, KeyName, Member, Node, NodeKind};
use crate::syntax::codes;
use crate::syntax::lexer::{Lexer, Token, TokenKind};

/// Objects and arrays nested deeper than this are skipped with [`codes::NESTING_TOO_DEEP`].
pub const MAX_DEPTH: usize = 128;

/// The result of parsing: the tree (when there is any value at all) and every syntax diagnostic.
#[derive(Debug, Clone)]
pub struct SyntaxTree {
    pub root: Option<Node>,
    pub diagnostics: Vec<Diagnostic>,
}

impl SyntaxTree {
    /// The top-level object's members, if the root is an object.
    pub fn object(&self) -> Option<&[Member]> {
        self.root.as_ref()?.as_object()
    }
}

/// Parses JSON text leniently: never fails, never panics, reports every problem it finds.
pub fn parse(text: &str) -> SyntaxTree {
    // Clean files (nearly all) take the fast path; the rest are parsed again here, which
    // reports what is wrong.
    if let Some(root) = super::clean::parse(text) {
        return SyntaxTree { root: Some(root), diagnostics: Vec::new() };
    }
    Parser::new(text).run()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Just after `{` or `[`.
    Open,
    /// After an object key: a `:` is due.
    Key,
    /// After `:`: a value is due.
    Colon,
    /// After a value: `,` or the closing bracket is due.
    Value,
    /// After `,`: a key (object) or a value (array) is due.
    Comma,
}

#[derive(Debug)]
struct Frame {
    is_object: bool,
    open: Span,
    state: State,
    items: Vec<Node>,
    members: Vec<Member>,
    /// Where each key of a large object was first written, for finding repeats in constant
    /// time once a linear scan would not do (see [`Frame::first_written`]).
    large: Option<foldhash::HashMap<KeyName, Span>>,
    key: Option<Key>,
    comma: Option<Span>,
    last_end: usize,
}

impl Frame {
    fn new(is_object: bool, open: Span) -> Self {
        Self {
            is_object,
            open,
            state: State::Open,
            items: Vec::new(),
            members: Vec::new(),
            large: None,
            key: None,
            comma: None,
            last_end: open.end,
        }
    }

    fn closer(&self) -> &'static str {
        if self.is_object { "}" } else { "]" }
    }

    /// Where `name` was first written in this object, if it was. Objects in tool files have a
    /// dozen keys, and scanning them beats hashing; past [`LINEAR_KEYS`] the keys are indexed,
    /// so that an object of a million keys is not a trillion comparisons.
    fn first_written(&mut self, name: &str) -> Option<Span> {
        if self.large.is_none() && self.members.len() >= LINEAR_KEYS {
            let mut index = foldhash::HashMap::default();
            for member in &self.members {
                index.entry(member.key.name.clone()).or_insert(member.key.span);
            }
            self.large = Some(index);
        }
        match &self.large {
            Some(index) => index.get(name).copied(),
            None => self.members.iter().find(|m| m.key.name == name).map(|m| m.key.span),
        }
    }

    /// Adds a member, indexing its key when the object is large.
    fn push_member(&mut self, member: Member) {
        if let Some(index) = &mut self.large {
            index.entry(member.key.name.clone()).or_insert(member.key.span);
        }
        self.members.push(member);
    }
}

/// How many keys an object holds before their repeats are found by hashing.
pub(crate) const LINEAR_KEYS: usize = 32;

enum Step<'a> {
    Next,
    Again(Token<'a>),
    Done,
}

pub(super) struct Parser<'a> {
    lexer: Lexer<'a>,
    len: usize,
    stack: Vec<Frame>,
    root: Option<Node>,
    diagnostics: Vec<Diagnostic>,
    reported_depth: bool,
}

impl<'a> Parser<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            lexer: Lexer::new(text),
            len: text.len(),
            stack: Vec::new(),
            root: None,
            diagnostics: Vec::new(),
            reported_depth: false,
        }
    }

    pub(super) fn run(mut self) -> SyntaxTree {
        let mut token = self.lexer.next_token();
        loop {
            let step =
                if self.stack.is_empty() { self.top_level(token) } else { self.in_frame(token) };
            token = match step {
                Step::Next => self.lexer.next_token(),
                Step::Again(token) => token,
                Step::Done => break,
            };
        }
        if let Some(root) = &self.root
            && !matches!(root.kind, NodeKind::Object(_) | NodeKind::Error)
        {
            self.diagnostics.push(
                Diagnostic::new(
                    &codes::NOT_AN_OBJECT,
                    format!("a tool file is a JSON object, this file holds {}", root.kind_name()),
                )
                .at(root.span)
                .with_help("wrap the tool in `{ \"model_prompt\": ... }`"),
            );
        }
        let mut diagnostics = self.lexer.diagnostics;
        diagnostics.append(&mut self.diagnostics);
        crate::diagnostic::sort(&mut diagnostics);
        SyntaxTree { root: self.root, diagnostics }
    }

    fn top_level(&mut self, token: Token<'a>) -> Step<'a> {
        match (&self.root, &token.kind) {
            (None, TokenKind::Eof) => {
                self.diagnostics.push(
                    Diagnostic::new(&codes::EMPTY_INPUT, "the file holds no JSON value")
                        .at(Span::new(0, self.len))
                        .with_help("a tool file needs at least `{ \"model_prompt\": \"...\" }`"),
                );
                Step::Done
            }
            (None, kind) if kind.starts_value() => self.begin_value(token),
            (None, kind) => {
                self.unexpected(token.span, format!("expected `{{`, found {}", kind.describe()));
                Step::Next
            }
            (Some(_), TokenKind::Eof) => Step::Done,
            (Some(_), _) => {
                self.diagnostics.push(
                    Diagnostic::new(
                        &codes::TRAILING_CONTENT,
                        "unexpected content after the tool's closing `}`",
                    )
                    .at(Span::new(token.span.start, self.len))
                    .with_help("a file holds one tool; move the rest into a file of its own"),
                );
                Step::Done
            }
        }
    }

    fn in_frame(&mut self, token: Token<'a>) -> Step<'a> {
        let Some(frame) = self.stack.last() else { return Step::Again(token) };
        let (is_object, state) = (frame.is_object, frame.state);
        match (&token.kind, state) {
            (TokenKind::Eof, _) => {
                self.unexpected_end();
                Step::Done
            }
            (TokenKind::RBrace, State::Open | State::Value | State::Comma) if is_object => {
                self.close(token.span)
            }
            (TokenKind::RBracket, State::Open | State::Value | State::Comma) if !is_object => {
                self.close(token.span)
            }
            (TokenKind::RBrace | TokenKind::RBracket, _)
                if (token.kind == TokenKind::RBrace) != is_object =>
            {
                self.mismatched_close(token)
            }
            (TokenKind::Comma, State::Value) => {
                let frame = self.top();
                frame.state = State::Comma;
                frame.comma = Some(token.span);
                Step::Next
            }
            (TokenKind::Comma, State::Open | State::Comma) => {
                let message = if is_object {
                    "expected a key, found `,`"
                } else {
                    "expected a value, found `,`"
                };
                self.diagnostics.push(
                    Diagnostic::new(&codes::UNEXPECTED_TOKEN, message)
                        .at(token.span)
                        .with_fix("remove the extra comma", vec![Edit::delete(token.span)]),
                );
                Step::Next
            }
            _ if is_object => self.in_object(token, state),
            _ => self.in_array(token, state),
        }
    }

    fn in_object(&mut self, token: Token<'a>, state: State) -> Step<'a> {
        match (token.kind, state) {
            (TokenKind::String(name), State::Open | State::Comma) => {
                self.set_key(Key { name: name.into(), span: token.span });
                Step::Next
            }
            (TokenKind::Ident(name), State::Open | State::Comma) => {
                self.diagnostics.push(
                    Diagnostic::new(&codes::UNQUOTED_KEY, format!("key `{name}` is not quoted"))
                        .at(token.span)
                        .with_fix(
                            "quote the key",
                            vec![Edit::replace(token.span, crate::syntax::quote(name))],
                        ),
                );
                self.set_key(Key { name: name.into(), span: token.span });
                Step::Next
            }
            (TokenKind::Colon, State::Key) => {
                self.top().state = State::Colon;
                Step::Next
            }
            (kind, State::Key) => {
                let key_end = self.top().key.as_ref().map_or(token.span.start, |k| k.span.end);
                let mut diagnostic = Diagnostic::new(
                    &codes::MISSING_COLON,
                    format!("expected `:` after the key, found {}", kind.describe()),
                )
                .at(Span::empty(key_end));
                if kind.starts_value() {
                    diagnostic =
                        diagnostic.with_fix("insert `:`", vec![Edit::insert(key_end, ":")]);
                    self.diagnostics.push(diagnostic);
                    self.top().state = State::Colon;
                } else {
                    self.diagnostics.push(diagnostic);
                    self.attach(Node::new(Span::empty(key_end), NodeKind::Error));
                }
                Step::Again(Token { kind, span: token.span })
            }
            (kind, State::Colon) if kind.starts_value() => {
                self.begin_value(Token { kind, span: token.span })
            }
            (kind, State::Colon) => {
                self.unexpected(token.span, format!("expected a value, found {}", kind.describe()));
                let at = self.top().last_end;
                self.attach(Node::new(Span::empty(at), NodeKind::Error));
                if matches!(kind, TokenKind::Comma | TokenKind::RBrace) {
                    Step::Again(Token { kind, span: token.span })
                } else {
                    Step::Next
                }
            }
            (kind @ (TokenKind::String(_) | TokenKind::Ident(_)), State::Value) => {
                self.missing_comma(token.span, "the next member starts here");
                Step::Again(Token { kind, span: token.span })
            }
            (kind, _) => {
                let expected =
                    if state == State::Value { "`,` or `}`" } else { "a key in double quotes" };
                self.unexpected(
                    token.span,
                    format!("expected {expected}, found {}", kind.describe()),
                );
                Step::Next
            }
        }
    }

    fn in_array(&mut self, token: Token<'a>, state: State) -> Step<'a> {
        match (token.kind, state) {
            (kind, State::Open | State::Comma) if kind.starts_value() => {
                self.begin_value(Token { kind, span: token.span })
            }
            (kind, State::Value) if kind.starts_value() => {
                self.missing_comma(token.span, "the next element starts here");
                Step::Again(Token { kind, span: token.span })
            }
            (kind, _) => {
                let expected = if state == State::Value { "`,` or `]`" } else { "a value" };
                self.unexpected(
                    token.span,
                    format!("expected {expected}, found {}", kind.describe()),
                );
                Step::Next
            }
        }
    }

    fn top(&mut self) -> &mut Frame {
        self.stack.last_mut().expect("in_frame is only called with an open frame")
    }

    /// Whether some open frame is of the kind that `closer` (`}` or `]`) closes.
    fn closes_an_open_frame(&self, closer: &Token) -> bool {
        let closes_object = closer.kind == TokenKind::RBrace;
        self.stack.iter().any(|frame| frame.is_object == closes_object)
    }

    fn set_key(&mut self, key: Key) {
        let frame = self.top();
        frame.key = Some(key);
        frame.state = State::Key;
    }

    fn begin_value(&mut self, token: Token<'a>) -> Step<'a> {
        let kind = match token.kind {
            TokenKind::LBrace | TokenKind::LBracket if self.stack.len() >= MAX_DEPTH => {
                let node = self.skip_too_deep(token.span);
                self.attach(node);
                return Step::Next;
            }
            TokenKind::LBrace | TokenKind::LBracket => {
                self.stack.push(Frame::new(token.kind == TokenKind::LBrace, token.span));
                return Step::Next;
            }
            TokenKind::String(s) => NodeKind::String(s.into_owned()),
            TokenKind::Number { raw } => NodeKind::Number(raw.to_owned()),
            TokenKind::True => NodeKind::Bool(true),
            TokenKind::False => NodeKind::Bool(false),
            TokenKind::Null => NodeKind::Null,
            TokenKind::Ident(word) => {
                self.bare_word(word, token.span);
                NodeKind::Error
            }
            other => {
                self.unexpected(
                    token.span,
                    format!("expected a value, found {}", other.describe()),
                );
                NodeKind::Error
            }
        };
        self.attach(Node::new(token.span, kind));
        Step::Next
    }

    /// Reports a bare word in value position, with the JSON spelling of the usual suspects.
    fn bare_word(&mut self, word: &str, span: Span) {
        let json = match word {
            "True" | "TRUE" => Some("true"),
            "False" | "FALSE" => Some("false"),
            "None" | "NULL" | "Null" | "nil" | "undefined" => Some("null"),
            _ => None,
        };
        let mut diagnostic =
            Diagnostic::new(&codes::UNEXPECTED_TOKEN, format!("expected a value, found `{word}`"))
                .at(span);
        diagnostic = match json {
            Some(json) => {
                diagnostic.with_fix(format!("write `{json}`"), vec![Edit::replace(span, json)])
            }
            None => diagnostic
                .with_help("strings are written in double quotes; JSON has no NaN or Infinity"),
        };
        self.diagnostics.push(diagnostic);
    }

    /// Puts a finished value into the open frame (or makes it the root).
    fn attach(&mut self, node: Node) {
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(node);
            return;
        };
        frame.last_end = node.span.end;
        frame.state = State::Value;
        if !frame.is_object {
            frame.items.push(node);
            return;
        }
        let Some(key) = frame.key.take() else { return };
        if let Some(first) = frame.first_written(&key.name) {
            self.diagnostics.push(
                Diagnostic::new(
                    &codes::DUPLICATE_KEY,
                    format!("key `{}` appears twice in this object", key.name),
                )
                .at_labelled(key.span, "written again here")
                .with_secondary(first, "first written here")
                .with_help("remove one of them; llmtool reads the last"),
            );
        }
        frame.push_member(Member { key, value: node });
    }

    /// Closes the innermost frame at `closer` and attaches it to its parent.
    fn close(&mut self, closer: Span) -> Step<'a> {
        let frame = self.stack.pop().expect("close is only called with an open frame");
        if frame.state == State::Comma
            && let Some(comma) = frame.comma
        {
            let what = if frame.is_object { "member" } else { "element" };
            self.diagnostics.push(
                Diagnostic::new(
                    &codes::TRAILING_COMMA,
                    format!("trailing comma after the last {what}"),
                )
                .at_labelled(comma, "this comma")
                .with_secondary(closer, format!("is followed by `{}`", frame.closer()))
                .with_help("JSON allows no comma before a closing bracket")
                .with_fix("remove the trailing comma", vec![Edit::delete(comma)]),
            );
        }
        self.finish(frame, closer.end);
        Step::Next
    }

    fn finish(&mut self, mut frame: Frame, end: usize) {
        if let Some(key) = frame.key.take() {
            // A key whose value never came; the missing value was reported already.
            let at = Span::empty(key.span.end);
            frame.members.push(Member { key, value: Node::new(at, NodeKind::Error) });
        }
        let kind = if frame.is_object {
            NodeKind::Object(frame.members)
        } else {
            NodeKind::Array(frame.items)
        };
        self.attach(Node::new(Span::new(frame.open.start, end), kind));
    }

    fn missing_comma(&mut self, next: Span, next_label: &str) {
        let frame = self.top();
        let at = frame.last_end;
        frame.state = State::Comma;
        frame.comma = None;
        self.diagnostics.push(
            Diagnostic::new(&codes::MISSING_COMMA, "expected `,` between these values")
                .at_labelled(Span::empty(at), "a comma is missing here")
                .with_secondary(next, next_label)
                .with_help("separate object members and array elements with commas")
                .with_fix("insert `,`", vec![Edit::insert(at, ",")]),
        );
    }

    fn mismatched_close(&mut self, token: Token<'a>) -> Step<'a> {
        let frame = self.stack.last().expect("an open frame");
        let (open, closer, at) = (frame.open, frame.closer(), frame.last_end);
        if self.closes_an_open_frame(&token) {
            // The bracket closes an outer frame: this one was never closed.
            self.diagnostics.push(
                Diagnostic::new(
                    &codes::UNEXPECTED_TOKEN,
                    format!("expected `{closer}`, found {}", token.kind.describe()),
                )
                .at(token.span)
                .with_secondary(open, "this bracket is never closed")
                .with_suggestion(format!("insert `{closer}`"), vec![Edit::insert(at, closer)]),
            );
            let frame = self.stack.pop().expect("an open frame");
            self.finish(frame, at);
            Step::Again(token)
        } else {
            self.diagnostics.push(
                Diagnostic::new(
                    &codes::UNEXPECTED_TOKEN,
                    format!("unmatched {}", token.kind.describe()),
                )
                .at(token.span)
                .with_suggestion("remove it", vec![Edit::delete(token.span)]),
            );
            Step::Next
        }
    }

    fn unexpected_end(&mut self) {
        let closers: String = self.stack.iter().rev().map(Frame::closer).collect();
        let innermost = self.stack.last().expect("an open frame").open;
        let mut diagnostic =
            Diagnostic::new(&codes::UNEXPECTED_END, "the file ends before every bracket is closed")
                .at_labelled(Span::empty(self.len), "the file ends here")
                .with_help(format!(
                    "the file looks truncated; it would need `{closers}` to be complete"
                ));
        diagnostic = diagnostic.with_secondary(innermost, "the innermost open bracket");
        self.diagnostics.push(diagnostic);
        while let Some(frame) = self.stack.pop() {
            self.finish(frame, self.len);
        }
    }

    /// Skips a value nested past [`MAX_DEPTH`] without building it (and without recursion).
    fn skip_too_deep(&mut self, open: Span) -> Node {
        if !self.reported_depth {
            self.reported_depth = true;
            self.diagnostics.push(
                Diagnostic::new(
                    &codes::NESTING_TOO_DEEP,
                    format!("objects and arrays are nested deeper than {MAX_DEPTH} levels"),
                )
                .at_labelled(open, "this value is skipped")
                .with_help("no field of a tool file nests this deep"),
            );
        }
        let mut depth = 1usize;
        let mut end = open.end;
        while depth > 0 {
            let token = self.lexer.next_token();
            end = token.span.end;
            match token.kind {
                TokenKind::LBrace | TokenKind::LBracket => depth += 1,
                TokenKind::RBrace | TokenKind::RBracket => depth -= 1,
                TokenKind::Eof => break,
                _ => {}
            }
        }
        Node::new(Span::new(open.start, end), NodeKind::Error)
    }

    fn unexpected(&mut self, span: Span, message: String) {
        self.diagnostics.push(Diagnostic::new(&codes::UNEXPECTED_TOKEN, message).at(span));
    }
}
