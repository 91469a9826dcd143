//! Telling a source's format from its file name and text: every candidate format is scored on
//! the evidence (the extension, the keys it uses, its first character), the best one wins,
//! and a tie is refused with a message that names the candidates, since a wrong guess would
//! import the wrong thing without a word.

use serde_json::{Map, Value};

use super::codes::INVALID_SOURCE;
use super::formats::Format;
use super::{FunctionFormat, looks_like_elisp};
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::span::Span;

/// One format a source may be in, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub format: Format,
    pub score: u32,
    /// What pointed to it: an extension, the keys seen.
    pub evidence: Vec<String>,
}

/// How much a file's extension weighs: more than any one key, less than several.
const EXTENSION: u32 = 4;
/// A key that only this format uses.
const OWN_KEY: u32 = 3;
/// The shape of a JSON function tool or MCP prompt, recognised whole.
const SHAPE: u32 = 10;

/// The keys that only a Prompty file's front matter uses.
const PROMPTY_KEYS: &[&str] =
    &["inputs", "outputs", "sample", "authors", "template", "base", "inputSchema", "outputSchema"];
/// The keys that only a Dotprompt file's front matter uses.
const DOTPROMPT_KEYS: &[&str] =
    &["input", "output", "config", "maxTurns", "toolChoice", "returnToolRequests", "variant"];
/// The keys that only a Semantic Kernel YAML prompt template uses.
const KERNEL_KEYS: &[&str] = &[
    "template",
    "template_format",
    "input_variables",
    "output_variable",
    "execution_settings",
    "allow_dangerously_set_content",
];
/// The keys that only an `llm` template uses (among YAML files without front matter).
const LLM_KEYS: &[&str] = &[
    "prompt",
    "system",
    "model",
    "tools",
    "attachments",
    "attachment_types",
    "defaults",
    "options",
    "schema_object",
    "extract",
    "extract_last",
    "fragments",
    "system_fragments",
    "functions",
];

/// The format of `text` (the file `path`): the best-scored candidate, or an error that says
/// why none is, naming the candidates when several fit as well.
pub fn detect(path: &str, text: &str) -> Result<Format, Box<Diagnostic>> {
    let mut candidates = candidates(path, text);
    candidates.sort_by_key(|candidate| std::cmp::Reverse(candidate.score));
    match candidates.as_slice() {
        [] => Err(Box::new(unknown(text))),
        [best, second, ..] if second.score == best.score => {
            let tied: Vec<String> = candidates
                .iter()
                .filter(|c| c.score == best.score)
                .map(|c| format!("{} ({})", c.format.name(), c.evidence.join(", ")))
                .collect();
            Err(Box::new(Diagnostic::new(
                &INVALID_SOURCE,
                format!(
                    "the format is ambiguous: it reads as {}; name it with `--from`",
                    tied.join(" or ")
                ),
            )))
        }
        [best, ..] => Ok(best.format),
    }
}

/// Every format `text` may be in, with its score (unsorted; scores of 0 are left out).
pub fn candidates(path: &str, text: &str) -> Vec<Candidate> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut found: Vec<Candidate> = Vec::new();
    let mut add = |format: Format, score: u32, evidence: String| {
        add_candidate(&mut found, format, score, evidence);
    };
    let extension = std::path::Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "prompty" => add(Format::Prompty, EXTENSION, "`.prompty`".into()),
        "prompt" => add(Format::Dotprompt, EXTENSION, "`.prompt`".into()),
        _ => {}
    }
    let first = text.trim_start().chars().next();
    if matches!(first, Some('{' | '[')) {
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            json_candidates(&value, &mut add);
        }
        return found;
    }
    if looks_like_elisp(text) {
        add(Format::Gptel, SHAPE, "an elisp form".into());
        return found;
    }
    if let Some(front) = front_matter_keys(text) {
        let prompty = own_keys(&front, PROMPTY_KEYS);
        let dotprompt = own_keys(&front, DOTPROMPT_KEYS);
        // A model named `provider/model` (`googleai/gemini-2.0-flash`) is Genkit's way.
        let genkit_model =
            front.get("model").and_then(Value::as_str).is_some_and(|m| m.contains('/'));
        // Prompty describes its model as a mapping (`api`, `configuration`...); Dotprompt names it.
        let model_mapping = front.get("model").is_some_and(Value::is_object);
        let keyed = !prompty.is_empty() || !dotprompt.is_empty() || genkit_model || model_mapping;
        for (format, keys) in [(Format::Prompty, prompty), (Format::Dotprompt, dotprompt)] {
            if !keys.is_empty() {
                add(format, OWN_KEY * keys.len() as u32, keys_evidence(&keys));
            }
        }
        if genkit_model {
            add(Format::Dotprompt, OWN_KEY, "a `provider/model` model name".into());
        }
        if model_mapping {
            add(Format::Prompty, OWN_KEY, "a `model` mapping".into());
        }
        if !keyed {
            // Front matter that says nothing either way.
            add(Format::Dotprompt, 1, "YAML front matter".into());
            add(Format::Prompty, 1, "YAML front matter".into());
        }
        return found;
    }
    if matches!(extension.as_str(), "prompty" | "prompt") {
        // A prompt file with no front matter is all template, whatever it looks like.
        return found;
    }
    if let Some(keys) = yaml_keys(text) {
        let kernel = own_keys(&keys, KERNEL_KEYS);
        let llm = own_keys(&keys, LLM_KEYS);
        if !kernel.is_empty() {
            add(Format::SemanticKernelYaml, OWN_KEY * kernel.len() as u32, keys_evidence(&kernel));
        }
        if !llm.is_empty() {
            add(Format::LlmTemplate, OWN_KEY * llm.len() as u32, keys_evidence(&llm));
        }
        return found;
    }
    // Text that is not a mapping: an `llm` template may be a bare prompt string.
    if text.lines().any(|line| line.starts_with("# llmtool:")) {
        add(Format::LlmTemplate, OWN_KEY, "a `# llmtool:` block".into());
    } else if matches!(extension.as_str(), "yaml" | "yml") {
        add(Format::LlmTemplate, 1, "a YAML file that is a bare string".into());
    }
    found
}

/// Why `text`, which no format fits, cannot be imported: where it is not JSON, if it looks
/// like JSON; what shape a JSON value lacks; else the formats llmtool reads.
fn unknown(text: &str) -> Diagnostic {
    let first = text.trim_start().chars().next();
    if matches!(first, Some('{' | '[')) {
        return match serde_json::from_str::<Value>(text) {
            Err(error) => not_json(text, "", &error),
            Ok(Value::Array(items)) => Diagnostic::new(
                &INVALID_SOURCE,
                format!(
                    "a JSON list of {} entries: llmtool imports one tool at a time, so import each entry on its own",
                    items.len()
                ),
            ),
            Ok(_) => Diagnostic::new(
                &INVALID_SOURCE,
                "a JSON value with neither the shape of a function tool (OpenAI, Anthropic, Gemini, MCP, JSON Schema) nor that of an MCP prompt; if it is meant to be one, name that format with `--from` to learn what it lacks",
            ),
        };
    }
    Diagnostic::new(
        &INVALID_SOURCE,
        "not a format llmtool imports: not a function tool, an MCP prompt, an elisp form, a prompt file (Prompty, Dotprompt, an `llm` template, a Semantic Kernel prompt template) or a tool file",
    )
}

/// `what` (a prefix such as "`config.json` is ") "not JSON", at the character of `text`
/// where reading it as JSON stopped with `error`.
pub(crate) fn not_json(text: &str, what: &str, error: &serde_json::Error) -> Diagnostic {
    let at = offset_of(text, error.line(), error.column());
    let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
    Diagnostic::new(&INVALID_SOURCE, format!("{what}not JSON: {error}")).at(Span::new(at, end))
}

/// The byte offset of a 1-based line and column (in characters) of `text`.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    let rest = &text[start.min(text.len())..];
    let within = rest.char_indices().nth(column.saturating_sub(1)).map_or(rest.len(), |(at, _)| at);
    (start + within).min(text.len())
}

/// Adds `score` and its `evidence` to `format`'s candidate.
fn add_candidate(found: &mut Vec<Candidate>, format: Format, score: u32, evidence: String) {
    match found.iter_mut().find(|c| c.format == format) {
        Some(candidate) => {
            candidate.score += score;
            candidate.evidence.push(evidence);
        }
        None => found.push(Candidate { format, score, evidence: vec![evidence] }),
    }
}

/// The format of one JSON tool: a function tool's, or an MCP prompt's.
pub fn detect_value(value: &Value) -> Option<Format> {
    let mut found = Vec::new();
    json_candidates(value, &mut |format, score, evidence| {
        add_candidate(&mut found, format, score, evidence);
    });
    found.first().map(|candidate| candidate.format)
}

/// The candidates of a JSON source: a function tool's format, an MCP prompt, or a Langfuse
/// prompt.
fn json_candidates(value: &Value, add: &mut impl FnMut(Format, u32, String)) {
    if super::prompt_files::openai_prompt::prompt_id(value).is_some() {
        add(Format::OpenAiPrompt, SHAPE, "an OpenAI prompt id (`pmpt_...`)".into());
    } else if super::prompt_files::langfuse::is_prompt(value) {
        add(Format::Langfuse, SHAPE, "a `name` with a `prompt` and Langfuse's keys".into());
    } else if let Some(format) = FunctionFormat::detect(value) {
        add(Format::of_function(format), SHAPE, format!("the shape of {} tool", format.name()));
    } else if value.get("arguments").is_some() && value.get("name").is_some() {
        add(Format::McpPrompt, SHAPE, "a `name` with `arguments`".into());
    }
}

/// The keys of the YAML front matter of `text` (after `#` comment lines), if it has one.
fn front_matter_keys(text: &str) -> Option<Map<String, Value>> {
    let mut rest = text;
    while rest.starts_with('#') {
        rest = rest.split_once('\n').map_or("", |(_, after)| after);
    }
    let rest = rest.strip_prefix("---\n").or_else(|| rest.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---").map_or(rest.len(), |at| at + 1);
    match super::prompt_files::parse_yaml(&rest[..end]) {
        Some(Value::Object(map)) => Some(map),
        None if rest[..end].trim().is_empty() => Some(Map::new()),
        Some(_) | None => None,
    }
}

/// The keys of `text` read as one YAML mapping, if it is one.
fn yaml_keys(text: &str) -> Option<Map<String, Value>> {
    match super::prompt_files::parse_yaml(text)? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn own_keys<'a>(map: &Map<String, Value>, keys: &[&'a str]) -> Vec<&'a str> {
    keys.iter().copied().filter(|key| map.contains_key(*key)).collect()
}

fn keys_evidence(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    quoted.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detected(path: &str, text: &str) -> Result<Format, String> {
        detect(path, text).map_err(|problem| problem.message)
    }

    #[test]
    fn yaml_is_told_apart_by_its_keys() {
        let kernel = "name: Story\ntemplate: Tell a story about {{$topic}}.\ntemplate_format: semantic-kernel\ninput_variables:\n  - name: topic\n";
        assert_eq!(detected("story.yaml", kernel), Ok(Format::SemanticKernelYaml));
        // A byte-order mark changes nothing.
        assert_eq!(
            detected("story.yaml", &format!("\u{feff}{kernel}")),
            Ok(Format::SemanticKernelYaml)
        );
        let llm = "prompt: 'Summarize: $input'\nsystem: Be brief.\ndefaults:\n  x: 1\n";
        assert_eq!(detected("summarize.yaml", llm), Ok(Format::LlmTemplate));
        let both = "template: a\nprompt: b\n";
        let message = detected("both.yaml", both).unwrap_err();
        assert!(message.contains("ambiguous"), "{message}");
        assert!(message.contains("semantic-kernel-yaml (`template`)"), "{message}");
        assert!(message.contains("llm-template (`prompt`)"), "{message}");
    }

    #[test]
    fn front_matter_is_told_apart_by_its_keys_and_the_extension() {
        let prompty = "---\nname: x\nmodel:\n  api: chat\ninputs:\n  q:\n    type: string\n---\nuser:\n{{q}}\n";
        assert_eq!(detected("x.md", prompty), Ok(Format::Prompty));
        let dotprompt =
            "---\nmodel: googleai/gemini-2.0-flash\ninput:\n  schema:\n    q: string\n---\n{{q}}\n";
        assert_eq!(detected("x.md", dotprompt), Ok(Format::Dotprompt));
        // A licence comment may come first.
        assert_eq!(
            detected("x.md", &format!("# Copyright\n# Licence\n{dotprompt}")),
            Ok(Format::Dotprompt)
        );
        assert_eq!(detected("x.prompt", "Hello {{name}}\n"), Ok(Format::Dotprompt));
        assert_eq!(detected("x.prompty", "system:\nHello\n"), Ok(Format::Prompty));
        let bare = "---\nname: x\n---\nHello\n";
        assert!(detected("x.md", bare).unwrap_err().contains("ambiguous"));
        assert_eq!(detected("x.prompt", bare), Ok(Format::Dotprompt));
    }

    #[test]
    fn json_that_fits_nothing_says_why_and_where() {
        let text = "{\n  \"a\": nope\n}";
        let problem = detect("x.json", text).unwrap_err();
        assert!(problem.message.starts_with("not JSON"), "{}", problem.message);
        // Where the parser stopped: inside `nope`.
        let span = problem.primary.as_ref().unwrap().span;
        let nope = text.find("nope").unwrap();
        assert!((nope..nope + 4).contains(&span.start), "{span:?}");
        let list = detected("x.json", "[{\"a\": 1}, {\"b\": 2}]").unwrap_err();
        assert!(list.contains("a JSON list of 2 entries") && !list.contains("--from"), "{list}");
        let object = detected("x.json", "{\"hello\": 1}").unwrap_err();
        assert!(object.contains("--from"), "{object}");
        let openai = r#"{"type": "function", "function": {"name": "f", "parameters": {}}}"#;
        assert_eq!(detected("x.json", openai), Ok(Format::OpenAi));
    }
}
