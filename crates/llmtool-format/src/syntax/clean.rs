//! The fast path for clean files: a recursive-descent parse of strict JSON that gives up at the
//! first thing the recovering parser would report.
//!
//! Nearly every file a checker sees is plain JSON, and for those the recovering parser's state
//! machine (a state per bracket, a step per token) costs more than the tree it builds: on the
//! benchmark corpus it was half of the whole in-process check. This parser reads the same tokens
//! from the same [`Lexer`] and builds the same tree with the same spans, but only while nothing
//! is wrong: a comment, a bad escape or number, a trailing or missing comma, a repeated key, a
//! root that is not an object, nesting past [`MAX_DEPTH`] or anything after the root makes it
//! return `None`, and [`super::parse`] then parses the file again with [`super::parser`], which
//! says what is wrong. A property test holds the two to the same tree on every clean text.
//!
//! It recurses once per nesting level, which is safe because it stops at [`MAX_DEPTH`].

use crate::span::Span;
use crate::syntax::ast::{Key, Member, Node, NodeKind};
use crate::syntax::lexer::{Lexer, Token, TokenKind};
use crate::syntax::parser::{LINEAR_KEYS, MAX_DEPTH};

/// The tree of `text` when it is a clean JSON object (one the recovering parser would report
/// nothing about), else `None`.
pub(crate) fn parse(text: &str) -> Option<Node> {
    let mut parser = Clean { lexer: Lexer::new(text), members: Vec::new(), items: Vec::new() };
    let open = parser.next()?;
    if open.kind != TokenKind::LBrace {
        return None;
    }
    let root = parser.object(open.span, 1)?;
    (parser.next()?.kind == TokenKind::Eof).then_some(root)
}

struct Clean<'a> {
    lexer: Lexer<'a>,
    /// The members of the objects being read, innermost last: each object takes its own off
    /// the end when it closes, as one vector of the exact size (no growing vector per object).
    members: Vec<Member>,
    /// The same for the elements of arrays.
    items: Vec<Node>,
}

impl<'a> Clean<'a> {
    /// The next token, unless reading it was worth a diagnostic.
    fn next(&mut self) -> Option<Token<'a>> {
        let token = self.lexer.next_token();
        self.lexer.diagnostics.is_empty().then_some(token)
    }

    /// The value `token` starts; `depth` is the number of brackets open around it.
    fn value(&mut self, token: Token<'a>, depth: usize) -> Option<Node> {
        let kind = match token.kind {
            TokenKind::LBrace => return self.object(token.span, depth + 1),
            TokenKind::LBracket => return self.array(token.span, depth + 1),
            TokenKind::String(s) => NodeKind::String(s.into_owned()),
            TokenKind::Number { raw } => NodeKind::Number(raw.to_owned()),
            TokenKind::True => NodeKind::Bool(true),
            TokenKind::False => NodeKind::Bool(false),
            TokenKind::Null => NodeKind::Null,
            _ => return None,
        };
        Some(Node::new(token.span, kind))
    }

    /// The object whose `{` is at `open`, read up to its `}`.
    fn object(&mut self, open: Span, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let first = self.members.len();
        let mut token = self.next()?;
        let end = if token.kind == TokenKind::RBrace {
            token.span.end
        } else {
            loop {
                let TokenKind::String(name) = token.kind else { return None };
                let key = Key { name: name.into(), span: token.span };
                let written = &self.members[first..];
                if written.len() >= LINEAR_KEYS || written.iter().any(|m| m.key.name == key.name) {
                    // A repeat is reported, and a large object's keys are indexed, by the
                    // recovering parser.
                    return None;
                }
                if self.next()?.kind != TokenKind::Colon {
                    return None;
                }
                let start = self.next()?;
                let value = self.value(start, depth)?;
                self.members.push(Member { key, value });
                let after = self.next()?;
                match after.kind {
                    TokenKind::Comma => token = self.next()?,
                    TokenKind::RBrace => break after.span.end,
                    _ => return None,
                }
            }
        };
        let members = self.members.split_off(first);
        Some(Node::new(Span::new(open.start, end), NodeKind::Object(members)))
    }

    /// The array whose `[` is at `open`, read up to its `]`.
    fn array(&mut self, open: Span, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let first = self.items.len();
        let mut token = self.next()?;
        let end = if token.kind == TokenKind::RBracket {
            token.span.end
        } else {
            loop {
                let item = self.value(token, depth)?;
                self.items.push(item);
                let after = self.next()?;
                match after.kind {
                    TokenKind::Comma => token = self.next()?,
                    TokenKind::RBracket => break after.span.end,
                    _ => return None,
                }
            }
        };
        let items = self.items.split_off(first);
        Some(Node::new(Span::new(open.start, end), NodeKind::Array(items)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parser::Parser;
    use proptest::prelude::*;

    /// The fast path takes `text` exactly when the recovering parser reports nothing, and then
    /// builds the same tree.
    fn agrees(text: &str) -> Result<(), TestCaseError> {
        let full = Parser::new(text).run();
        match parse(text) {
            Some(root) => {
                prop_assert!(full.diagnostics.is_empty(), "clean, but: {:?}", full.diagnostics);
                prop_assert_eq!(Some(root), full.root);
            }
            None => prop_assert!(
                !full.diagnostics.is_empty() || full.root.as_ref().is_some_and(has_large_object),
                "given up on a clean text"
            ),
        }
        Ok(())
    }

    fn has_large_object(node: &Node) -> bool {
        match &node.kind {
            NodeKind::Object(members) => {
                members.len() >= LINEAR_KEYS || members.iter().any(|m| has_large_object(&m.value))
            }
            NodeKind::Array(items) => items.iter().any(has_large_object),
            _ => false,
        }
    }

    /// JSON-like text: mostly well formed, with repeated keys, escapes good and bad, numbers
    /// and words JSON has and has not, comments and stray commas mixed in.
    fn json_text() -> impl Strategy<Value = String> {
        let space = prop_oneof![Just(""), Just(" "), Just("\n  "), Just("\t"), Just("\r\n")];
        let string = proptest::collection::vec(
            prop_oneof![
                "[a-z ]{1,5}",
                Just("\\n".to_owned()),
                Just("\\\"".to_owned()),
                Just("\\u00e9".to_owned()),
                Just("\\ud83d\\ude80".to_owned()),
                Just("주제".to_owned()),
                Just("\\q".to_owned()),
                Just("\\ud800".to_owned()),
                Just("\u{1}".to_owned()),
            ],
            0..4,
        )
        .prop_map(|parts| format!("\"{}\"", parts.concat()));
        let leaf = prop_oneof![
            string.clone(),
            prop_oneof![Just("0"), Just("-12.5e3"), Just("01"), Just("1."), Just("+1"), Just("7")]
                .prop_map(str::to_owned),
            prop_oneof![Just("true"), Just("false"), Just("null"), Just("True"), Just("nan")]
                .prop_map(str::to_owned),
            Just("'single'".to_owned()),
        ];
        let key = prop_oneof![
            Just("\"a\"".to_owned()),
            Just("\"b\"".to_owned()),
            Just("\"c\\u0064\"".to_owned()),
            Just("\"cd\"".to_owned()),
            Just("e".to_owned()),
        ];
        let separator = prop_oneof![
            8 => Just(","),
            1 => Just(""),
            1 => Just(",,"),
            1 => Just("/* note */,"),
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            let item = (space.clone(), inner.clone(), space.clone(), separator.clone());
            let member = (key.clone(), space.clone(), inner, space.clone(), separator.clone());
            prop_oneof![
                (proptest::collection::vec(item, 0..5), any::<bool>()).prop_map(
                    |(items, trail)| {
                        let mut text = String::from("[");
                        for (i, (before, value, after, separator)) in items.iter().enumerate() {
                            let last = i + 1 == items.len();
                            let comma = if last && !trail { "" } else { *separator };
                            text.push_str(&format!("{before}{value}{after}{comma}"));
                        }
                        text + "]"
                    }
                ),
                (proptest::collection::vec(member, 0..5), any::<bool>()).prop_map(
                    |(members, trail)| {
                        let mut text = String::from("{");
                        for (i, (key, before, value, after, separator)) in
                            members.iter().enumerate()
                        {
                            let last = i + 1 == members.len();
                            let comma = if last && !trail { "" } else { *separator };
                            text.push_str(&format!("{key}{before}:{value}{after}{comma}"));
                        }
                        text + "}"
                    }
                ),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn the_fast_path_agrees_with_the_recovering_parser(
            body in json_text(),
            wrap in any::<bool>(),
            tail in prop_oneof![Just(""), Just("\n"), Just(" x"), Just("// end")],
        ) {
            let text = if wrap { format!("\u{feff}{{\"x\": {body}}}{tail}") } else { format!("{body}{tail}") };
            agrees(&text)?;
        }

        #[test]
        fn one_changed_byte_is_still_read_alike(
            body in json_text(),
            at in any::<prop::sample::Index>(),
            byte in prop_oneof![Just(b','), Just(b'}'), Just(b']'), Just(b'"'), Just(b'\\'), Just(b'/'), Just(b' '), Just(b'1')],
        ) {
            let mut bytes = format!("{{\"x\": {body}}}").into_bytes();
            let at = at.index(bytes.len());
            if byte == b' ' { bytes.remove(at); } else { bytes.insert(at, byte); }
            if let Ok(text) = String::from_utf8(bytes) {
                agrees(&text)?;
            }
        }
    }

    #[test]
    fn nesting_up_to_the_limit_is_clean_and_one_more_is_not() {
        for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1] {
            let inner = depth - 1;
            let text = format!("{{\"a\":{}{}}}", "[".repeat(inner), "]".repeat(inner));
            agrees(&text).unwrap();
            assert_eq!(parse(&text).is_some(), depth <= MAX_DEPTH, "depth {depth}");
        }
    }

    #[test]
    fn a_large_object_is_left_to_the_recovering_parser() {
        let members: Vec<String> = (0..=LINEAR_KEYS).map(|i| format!("\"k{i}\": {i}")).collect();
        let text = format!("{{{}}}", members.join(", "));
        assert!(parse(&text).is_none());
        assert!(Parser::new(&text).run().diagnostics.is_empty());
    }

    #[test]
    fn every_fixture_is_read_alike() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut pending = vec![root];
        let mut clean = 0;
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    pending.push(path);
                } else if let Ok(text) = std::fs::read_to_string(&path) {
                    agrees(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    clean += usize::from(parse(&text).is_some());
                }
            }
        }
        assert!(clean > 10, "only {clean} fixtures took the fast path");
    }
}
