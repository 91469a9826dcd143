//! What `llmtool check` would refuse in an imported tool, said against the source file: an
//! import never writes a tool that does not pass `check` (a Dotprompt `temperature: 3`, say).

use llmtool_format::diagnostic::{Diagnostic, Severity};
use llmtool_format::document::Document;
use llmtool_format::span::Span;

/// The errors of the tool file `tool` (imported from `source`), each placed where `source`
/// writes the key it is about, when it can be found there; empty when the tool passes.
pub fn errors_in_source(tool: &str, source: &str) -> Vec<Diagnostic> {
    let document = Document::from_text(tool.to_owned());
    document
        .diagnostics
        .into_iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .map(|mut diagnostic| {
            let key = diagnostic.primary.as_ref().and_then(|label| key_before(tool, label.span));
            diagnostic.secondary.clear();
            diagnostic.fix = None;
            diagnostic.primary = None;
            diagnostic.help = Some(match &key {
                Some(key) => format!(
                    "the imported tool's `{key}` would not pass `llmtool check`; change it in the source"
                ),
                None => "the imported tool would not pass `llmtool check`; change the source".into(),
            });
            match key.and_then(|key| key_in(source, &key)) {
                Some(span) => diagnostic.at(span),
                None => diagnostic,
            }
        })
        .collect()
}

/// The JSON key whose value (or object) holds `span` in the tool file `text`: the last
/// `"key":` before it on its line, or on the line before.
fn key_before(text: &str, span: Span) -> Option<String> {
    let before = text.get(..span.start)?;
    let from = before.rfind('\n').and_then(|end| before[..end].rfind('\n')).map_or(0, |at| at + 1);
    let line = &before[from..];
    let colon = line.rfind("\":")?;
    let open = line[..colon].rfind('"')?;
    Some(line[open + 1..colon].to_owned())
}

/// Where `source` writes the tool's `key`: under its own name, or under the name the peers
/// give it (`topP`, Dotprompt's `maxOutputTokens`).
fn key_in(source: &str, key: &str) -> Option<Span> {
    let camel: String = key
        .split('_')
        .enumerate()
        .map(|(i, word)| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) if i > 0 => first.to_uppercase().chain(chars).collect(),
                _ => word.to_owned(),
            }
        })
        .collect();
    let peer_names: &[&str] = if key == "max_tokens" { &["maxOutputTokens"] } else { &[] };
    [key, camel.as_str()]
        .into_iter()
        .chain(peer_names.iter().copied())
        .find_map(|name| written_key(source, name))
}

/// Where `source` writes `key` as a key: `key:` (YAML) or `"key":` (JSON), first found.
fn written_key(source: &str, key: &str) -> Option<Span> {
    source.match_indices(key).map(|(at, _)| at).find_map(|at| {
        let quoted = source[..at].ends_with(['"', '\'']);
        let mut after = &source[at + key.len()..];
        if quoted {
            after = after.strip_prefix(['"', '\''])?;
        }
        let starts_line = source[..at]
            .trim_end_matches(['"', '\''])
            .trim_end_matches([' ', '\t', '-'])
            .ends_with(['\n', '{', ','])
            || at == 0;
        (starts_line && after.trim_start_matches([' ', '\t']).starts_with(':'))
            .then(|| Span::new(at, at + key.len()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_out_of_range_is_placed_at_its_key_in_the_source() {
        let source = "---\nconfig:\n  temperature: 3\n---\nHi {{name}}\n";
        let tool = r#"{
  "model_prompt": "Hi {{name}}",
  "metadata": {
    "prompt_name": "Hi",
    "parameters": {
      "temperature": 3
    }
  }
}
"#;
        let errors = errors_in_source(tool, source);
        assert_eq!(errors.len(), 1, "{errors:?}");
        let span = errors[0].primary.as_ref().unwrap().span;
        assert_eq!(&source[span.start..span.end], "temperature");
        assert!(errors_in_source(&tool.replace(": 3", ": 1"), source).is_empty());
    }

    #[test]
    fn a_key_the_peer_names_otherwise_is_found_under_its_name() {
        let source = "---\nconfig:\n  topP: 5\n---\nHi\n";
        let tool = "{\n  \"model_prompt\": \"Hi\",\n  \"metadata\": {\n    \"prompt_name\": \"Hi\",\n    \"parameters\": {\n      \"top_p\": 5\n    }\n  }\n}\n";
        let errors = errors_in_source(tool, source);
        let span = errors[0].primary.as_ref().expect("placed").span;
        assert_eq!(&source[span.start..span.end], "topP");
        let source = "---\nconfig:\n  maxOutputTokens: -1\n---\nHi\n";
        let tool = tool.replace("\"top_p\": 5", "\"max_tokens\": -1");
        let errors = errors_in_source(&tool, source);
        assert_eq!(errors.len(), 1, "{errors:?}");
        let span = errors[0].primary.as_ref().expect("placed").span;
        assert_eq!(&source[span.start..span.end], "maxOutputTokens");
    }
}
