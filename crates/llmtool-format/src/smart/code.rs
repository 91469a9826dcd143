//! What `check` learns from a smart tool's Python code without running it: its syntax errors
//! (for the Python the sandbox runs), its `execute` function, and which variables it reads.
//! Parsed once by Ruff's parser, which recovers after an error so every one is reported.

use std::ops::Range;

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{Expr, PythonVersion, Stmt};
use ruff_python_parser::{Mode, ParseOptions, parse_unchecked};
use ruff_text_size::{Ranged, TextRange};

/// The Python the sandbox runs: newer syntax is reported, as it would fail there.
pub const PYTHON_VERSION: (u8, u8) = (3, 12);

/// What the code says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeFacts {
    /// Syntax errors: where (a byte range of the code) and what.
    pub syntax_errors: Vec<(Range<usize>, String)>,
    /// Syntax the sandbox's Python does not have yet.
    pub newer_syntax: Vec<(Range<usize>, String)>,
    /// The module-level `execute` function, when there is one.
    pub execute: Option<Execute>,
    /// Each variable the code reads by a literal key (`variables["topic"]`,
    /// `variables.get("topic")`), in order, with where.
    pub reads: Vec<(String, Range<usize>)>,
    /// The code uses its variables some other way (passes the dict on, iterates it, reads a
    /// computed key): which ones it reads cannot be known.
    pub reads_unknown: bool,
}

/// The `execute` function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execute {
    /// Its name in the `def` line.
    pub name: Range<usize>,
    /// Its parameter list.
    pub parameters: Range<usize>,
    pub is_async: bool,
    /// Whether it can be called with one positional argument, and nothing else is required.
    pub takes_one_argument: bool,
}

/// What a piece of the code is, for an editor to colour it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeToken {
    Keyword,
    String,
    Number,
    Comment,
    /// The name a `def` or `class` defines.
    Definition,
}

/// The pieces of `code` worth colouring, in order: keywords (not soft ones such as `match`,
/// which are often names), strings (f-strings whole), numbers, comments, defined names.
pub fn highlights(code: &str) -> Vec<(Range<usize>, CodeToken)> {
    let (major, minor) = PYTHON_VERSION;
    let options =
        ParseOptions::from(Mode::Module).with_target_version(PythonVersion { major, minor });
    let parsed = parse_unchecked(code, options);
    let mut out: Vec<(Range<usize>, CodeToken)> = Vec::new();
    let mut after_def = false;
    for token in parsed.tokens() {
        let kind = token.kind();
        let piece = match kind {
            TokenKind::Name if after_def => Some(CodeToken::Definition),
            TokenKind::Int | TokenKind::Float | TokenKind::Complex => Some(CodeToken::Number),
            TokenKind::Comment => Some(CodeToken::Comment),
            TokenKind::String
            | TokenKind::FStringStart
            | TokenKind::FStringMiddle
            | TokenKind::FStringEnd
            | TokenKind::TStringStart
            | TokenKind::TStringMiddle
            | TokenKind::TStringEnd => Some(CodeToken::String),
            _ if kind.is_non_soft_keyword() => Some(CodeToken::Keyword),
            _ => None,
        };
        after_def = matches!(kind, TokenKind::Def | TokenKind::Class);
        if let Some(piece) = piece {
            let range = range(token.range());
            // An f-string's parts join into one string token (its `{...}` stay apart).
            match out.last_mut() {
                Some((last, CodeToken::String))
                    if piece == CodeToken::String && last.end == range.start =>
                {
                    last.end = range.end;
                }
                _ => out.push((range, piece)),
            }
        }
    }
    out
}

fn range(range: TextRange) -> Range<usize> {
    range.start().to_usize()..range.end().to_usize()
}

/// Reads `code`.
pub fn facts(code: &str) -> CodeFacts {
    let (major, minor) = PYTHON_VERSION;
    let options =
        ParseOptions::from(Mode::Module).with_target_version(PythonVersion { major, minor });
    let parsed = parse_unchecked(code, options);
    let mut facts = CodeFacts {
        syntax_errors: parsed
            .errors()
            .iter()
            .map(|e| (range(e.location), e.error.to_string()))
            .collect(),
        newer_syntax: parsed
            .unsupported_syntax_errors()
            .iter()
            .map(|e| (range(e.range), e.to_string()))
            .collect(),
        ..CodeFacts::default()
    };
    let Some(module) = parsed.syntax().as_module() else { return facts };
    // The last top-level `def execute` wins, as it does when Python runs the module.
    let execute = module.body.iter().rev().find_map(|stmt| match stmt {
        Stmt::FunctionDef(def) if def.name.as_str() == "execute" => Some(def),
        _ => None,
    });
    let Some(def) = execute else { return facts };
    let params = &def.parameters;
    let positional: Vec<_> = params.posonlyargs.iter().chain(&params.args).collect();
    let required_after_first = positional.iter().skip(1).any(|p| p.default.is_none())
        || params.kwonlyargs.iter().any(|p| p.default.is_none());
    let takes_one_argument =
        (!positional.is_empty() || params.vararg.is_some()) && !required_after_first;
    facts.execute = Some(Execute {
        name: range(def.name.range()),
        parameters: range(params.range),
        is_async: def.is_async,
        takes_one_argument,
    });
    let Some(first) = positional.first() else {
        facts.reads_unknown = true;
        return facts;
    };
    let mut reads =
        Reads { name: first.parameter.name.as_str(), found: Vec::new(), unknown: false };
    for stmt in &def.body {
        reads.visit_stmt(stmt);
    }
    facts.reads = reads.found;
    facts.reads_unknown = reads.unknown;
    facts
}

/// Finds the literal keys read from the parameter called `name`.
struct Reads<'a> {
    name: &'a str,
    found: Vec<(String, Range<usize>)>,
    unknown: bool,
}

impl Reads<'_> {
    fn is_param(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Name(n) if n.id.as_str() == self.name)
    }

    fn literal_key(expr: &Expr) -> Option<(String, Range<usize>)> {
        match expr {
            Expr::StringLiteral(s) => Some((s.value.to_str().to_owned(), range(s.range))),
            _ => None,
        }
    }
}

impl<'a> Visitor<'a> for Reads<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // A nested function or class with its own parameter of the same name is another scope;
        // reads through it still count, which errs toward fewer warnings.
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Subscript(sub) if self.is_param(&sub.value) => {
                match Self::literal_key(&sub.slice) {
                    Some(read) => self.found.push(read),
                    None => {
                        self.unknown = true;
                        self.visit_expr(&sub.slice);
                    }
                }
            }
            Expr::Call(call)
                if matches!(&*call.func, Expr::Attribute(a)
                    if self.is_param(&a.value)
                        && matches!(a.attr.as_str(), "get" | "pop" | "setdefault")) =>
            {
                match call.arguments.args.first().and_then(Self::literal_key) {
                    Some(read) => self.found.push(read),
                    None => self.unknown = true,
                }
                for arg in &call.arguments.args {
                    self.visit_expr(arg);
                }
            }
            Expr::Name(_) if self.is_param(expr) => self.unknown = true,
            _ => walk_expr(self, expr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(facts: &CodeFacts) -> Vec<&str> {
        facts.reads.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn reads_by_literal_key_are_found() {
        let code = "def execute(variables):\n    a = variables['topic']\n    b = variables.get(\"tone\", 'x')\n    return a + b\n";
        let facts = facts(code);
        assert!(facts.syntax_errors.is_empty());
        assert_eq!(keys(&facts), ["topic", "tone"]);
        assert!(!facts.reads_unknown);
        let execute = facts.execute.unwrap();
        assert!(execute.takes_one_argument && !execute.is_async);
        assert_eq!(&code[execute.name], "execute");
        assert_eq!(&code[facts.reads[0].1.clone()], "'topic'");
    }

    #[test]
    fn passing_the_variables_on_makes_reads_unknown() {
        assert!(facts("def execute(v):\n    return helper(v)\n").reads_unknown);
        assert!(facts("def execute(v):\n    return v[k]\n").reads_unknown);
        assert!(facts("def execute(v):\n    for k in v:\n        pass\n").reads_unknown);
    }

    #[test]
    fn execute_shapes() {
        let one = |code: &str| facts(code).execute.map(|e| e.takes_one_argument);
        assert_eq!(one("def execute(variables): pass"), Some(true));
        assert_eq!(one("def execute(variables, extra=1): pass"), Some(true));
        assert_eq!(one("def execute(*args): pass"), Some(true));
        assert_eq!(one("def execute(): pass"), Some(false));
        assert_eq!(one("def execute(a, b): pass"), Some(false));
        assert_eq!(one("def execute(a, *, key): pass"), Some(false));
        assert_eq!(one("def run(variables): pass"), None);
        assert!(facts("async def execute(v): pass").execute.unwrap().is_async);
    }

    #[test]
    fn highlights_name_each_piece() {
        let code = "def execute(v):  # go\n    return f\"{v['a']}!\" + 'x' * 2\n";
        let shown: Vec<(&str, CodeToken)> =
            highlights(code).into_iter().map(|(r, t)| (&code[r], t)).collect();
        assert_eq!(
            shown,
            [
                ("def", CodeToken::Keyword),
                ("execute", CodeToken::Definition),
                ("# go", CodeToken::Comment),
                ("return", CodeToken::Keyword),
                ("f\"", CodeToken::String),
                ("'a'", CodeToken::String),
                ("!\"", CodeToken::String),
                ("'x'", CodeToken::String),
                ("2", CodeToken::Number),
            ]
        );
    }

    #[test]
    fn syntax_errors_and_newer_syntax_are_located() {
        let code = "def execute(variables):\n    return (1,\n";
        let facts = facts(code);
        assert!(!facts.syntax_errors.is_empty());
        let newer = super::facts("type Point = tuple[int, int]\ndef execute(v): pass\n");
        assert!(newer.syntax_errors.is_empty());
        assert!(newer.newer_syntax.is_empty(), "type aliases are Python 3.12");
        let newer = super::facts(
            "def execute(v):\n    try:\n        pass\n    except A, B:\n        pass\n",
        );
        assert!(!newer.newer_syntax.is_empty() || !newer.syntax_errors.is_empty());
    }
}
