//! Semantic tokens for the placeholders inside `model_prompt`, and the "Render", "Run" and
//! "Test" code lenses above it with the commands they carry.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use llmtool_core::Span;
use serde_json::Value;
use tower_lsp_server::ls_types::{
    CodeLens, Command, SemanticToken, SemanticTokenModifier, SemanticTokenType,
    SemanticTokensLegend, Uri,
};

use crate::files::OpenFile;
use crate::navigation;

/// Declared placeholders are variables; undeclared ones are marked as such.
pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: vec![SemanticTokenType::VARIABLE],
        token_modifiers: vec![SemanticTokenModifier::new("undeclared")],
    }
}

/// One token per placeholder, relative to the one before, as the protocol packs them.
pub fn semantic_tokens(file: &OpenFile) -> Vec<SemanticToken> {
    let Some(tool) = &file.document.tool else { return Vec::new() };
    let declared: HashSet<&str> = tool.variables().iter().map(|v| v.name.value.trim()).collect();
    let mut tokens = Vec::new();
    let (mut line, mut character) = (0, 0);
    for found in navigation::uses(file) {
        let start = file.lines.position(file.text(), found.span.start);
        let end = file.lines.position(file.text(), found.span.end);
        if start.line != end.line {
            continue;
        }
        let delta_line = start.line - line;
        let delta_start =
            if delta_line == 0 { start.character - character } else { start.character };
        tokens.push(SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type: 0,
            token_modifiers_bitset: u32::from(!declared.contains(found.name.as_str())),
        });
        (line, character) = (start.line, start.character);
    }
    tokens
}

/// The commands the lenses carry; `workspace/executeCommand` runs them.
pub const RENDER: &str = "llmtool.render";
pub const RUN: &str = "llmtool.run";
pub const TEST: &str = "llmtool.test";

/// "Render" and "Run" above `model_prompt`, and "Test" when the tool has a test file beside it.
pub fn code_lenses(uri: &Uri, file: &OpenFile) -> Vec<CodeLens> {
    let Some(prompt) = file.document.tool.as_ref().and_then(|t| t.model_prompt.as_ref()) else {
        return Vec::new();
    };
    let range = file.lines.range(file.text(), Span::empty(prompt.span.start));
    let lens = |title: &str, command: &str| CodeLens {
        range,
        command: Some(Command {
            title: title.to_owned(),
            command: command.to_owned(),
            arguments: Some(vec![Value::String(uri.as_str().to_owned())]),
        }),
        data: None,
    };
    let mut lenses = vec![lens("Render", RENDER), lens("Run", RUN)];
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
/// runs for it (`llmtool_core::suite::test_file_names`).
pub fn test_file(uri: &Uri) -> Option<PathBuf> {
    let path = path_of(uri)?;
    let name = path.file_name()?.to_str()?;
    llmtool_core::suite::test_file_names(name)
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
}
