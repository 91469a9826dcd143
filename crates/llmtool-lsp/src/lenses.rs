//! Semantic tokens for the placeholders inside `model_prompt` and for a smart tool's Python
//! inside `tool_code`, and the "Render", "Run" and "Test" code lenses above the prompt with the
//! commands they carry.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use llmtool_format::Span;
use llmtool_format::smart::{CodeToken, highlights};
use llmtool_format::syntax::literal::Escapes;
use serde_json::Value;
use tower_lsp_server::ls_types::{
    CodeLens, Command, SemanticToken, SemanticTokenModifier, SemanticTokenType,
    SemanticTokensLegend, Uri,
};

use crate::files::OpenFile;
use crate::navigation;

/// Declared placeholders are variables; undeclared ones are marked as such. The other types
/// colour a smart tool's Python, in the order of [`code_type`].
pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: vec![
            SemanticTokenType::VARIABLE,
            SemanticTokenType::KEYWORD,
            SemanticTokenType::STRING,
            SemanticTokenType::NUMBER,
            SemanticTokenType::COMMENT,
            SemanticTokenType::FUNCTION,
        ],
        token_modifiers: vec![SemanticTokenModifier::new("undeclared")],
    }
}

/// The legend's index of a piece of Python.
fn code_type(token: CodeToken) -> u32 {
    match token {
        CodeToken::Keyword => 1,
        CodeToken::String => 2,
        CodeToken::Number => 3,
        CodeToken::Comment => 4,
        CodeToken::Definition => 5,
    }
}

/// One token per placeholder and per piece of Python, in the file's order, each relative to
/// the one before, as the protocol packs them.
pub fn semantic_tokens(file: &OpenFile) -> Vec<SemanticToken> {
    let Some(tool) = &file.document.tool else { return Vec::new() };
    let declared: HashSet<&str> = tool.variables().iter().map(|v| v.name.value.trim()).collect();
    // (span, type, modifiers), gathered and then put in order.
    let mut found: Vec<(Span, u32, u32)> = navigation::uses(file)
        .into_iter()
        .map(|u| (u.span, 0, u32::from(!declared.contains(u.name.as_str()))))
        .collect();
    if let Some(code) = tool.code() {
        let escapes = Escapes::of(file.text(), code.span);
        for (range, token) in highlights(&code.value) {
            found.push((escapes.span(range), code_type(token), 0));
        }
    }
    found.sort_by_key(|(span, _, _)| span.start);
    let mut tokens = Vec::new();
    let (mut line, mut character) = (0, 0);
    for (span, token_type, modifiers) in found {
        let start = file.lines.position(file.text(), span.start);
        let end = file.lines.position(file.text(), span.end);
        if start.line != end.line || end.character <= start.character {
            continue;
        }
        let delta_line = start.line - line;
        let delta_start =
            if delta_line == 0 { start.character - character } else { start.character };
        tokens.push(SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type,
            token_modifiers_bitset: modifiers,
        });
        (line, character) = (start.line, start.character);
    }
    tokens
}

/// The commands the lenses carry; `workspace/executeCommand` runs them.
pub const RENDER: &str = "llmtool.render";
pub const RUN: &str = "llmtool.run";
pub const TEST: &str = "llmtool.test";

/// "Render" and "Run" above `model_prompt` (a smart tool: "Run" above `tool_code`, as it has no
/// prompt to render), and "Test" when the tool has a test file beside it.
pub fn code_lenses(uri: &Uri, file: &OpenFile) -> Vec<CodeLens> {
    let Some(tool) = &file.document.tool else { return Vec::new() };
    let (at, renders) = match (tool.code(), &tool.model_prompt) {
        (Some(code), _) => (code.span.start, false),
        (None, Some(prompt)) => (prompt.span.start, true),
        (None, None) => return Vec::new(),
    };
    let range = file.lines.range(file.text(), Span::empty(at));
    let lens = |title: &str, command: &str| CodeLens {
        range,
        command: Some(Command {
            title: title.to_owned(),
            command: command.to_owned(),
            arguments: Some(vec![Value::String(uri.as_str().to_owned())]),
        }),
        data: None,
    };
    let mut lenses = if renders { vec![lens("Render", RENDER)] } else { Vec::new() };
    lenses.push(lens("Run", RUN));
    if test_file(uri).is_some() {
        lenses.push(lens("Test", TEST));
    }
    lenses
}

/// The file a `file:` URI names: an absolute path only, so that a client's `file:--help` or
/// `file:-` can never read as an option or as standard input.
pub fn path_of(uri: &Uri) -> Option<PathBuf> {
    if uri.scheme().as_str() != "file" {
        return None;
    }
    let decoded = uri.path().decode().to_string().ok()?;
    Some(PathBuf::from(decoded.into_owned())).filter(|path| path.is_absolute())
}

/// The arguments of `llmtool VERB` on the tool file `path` (the Run and Test lenses): the path
/// after `--`, so that nothing in it is read as an option.
pub fn command_line<'a>(verb: &'a str, path: &'a Path) -> [&'a OsStr; 3] {
    [verb.as_ref(), "--".as_ref(), path.as_os_str()]
}

/// The test file beside the tool the URI names, if there is one: the first that `llmtool test`
/// runs for it (`llmtool_format::suite::test_file_names`).
pub fn test_file(uri: &Uri) -> Option<PathBuf> {
    let path = path_of(uri)?;
    let name = path.file_name()?.to_str()?;
    llmtool_format::suite::test_file_names(name)
        .into_iter()
        .map(|beside| path.with_file_name(beside))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_absolute_file_path_is_run_and_it_comes_after_dashes() {
        for uri in ["file:--help", "file:-", "file:--config=/tmp/x.toml", "untitled:x.json"] {
            let uri: Uri = uri.parse().expect("a URI");
            assert_eq!(path_of(&uri), None, "{}", uri.as_str());
        }
        let uri: Uri = "file:///work/-x.json".parse().expect("a URI");
        let path = path_of(&uri).expect("an absolute path");
        assert_eq!(command_line("run", &path), ["run", "--", "/work/-x.json"].map(OsStr::new));
    }

    #[test]
    fn a_smart_tools_python_is_coloured_where_it_is_in_the_file() {
        let text = r#"{"metadata": {"tool_code": "def execute(v):\n    return 42 # x"}}"#;
        let mut files = crate::files::Files::default();
        let uri: Uri = "file:///work/smart.json".parse().expect("a URI");
        let file = files.open(&uri, 1, text.to_owned());
        let (mut line, mut character) = (0, 0);
        let mut shown = Vec::new();
        for token in semantic_tokens(file) {
            line += token.delta_line;
            character = if token.delta_line == 0 {
                character + token.delta_start
            } else {
                token.delta_start
            };
            assert_eq!(line, 0);
            let (start, end) = (character as usize, (character + token.length) as usize);
            shown.push((&text[start..end], token.token_type));
        }
        assert_eq!(
            shown,
            [("def", 1), ("execute", 5), ("return", 1), ("42", 3), ("# x", 4)],
            "keyword, definition, keyword, number, comment"
        );
    }
}
