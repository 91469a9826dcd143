//! A test file and its tool written for promptfoo (`promptfoo eval`): a `promptfooconfig.yaml`
//! and the prompt beside it, as a chat prompt file (`NAME.prompt.json`: one user message, or
//! a chat tool's turns),
//! which promptfoo renders with Nunjucks without rendering the values again.
//!
//! What each side means the same way:
//! - the cases are `tests` (`description`, `vars`, `assert`, `threshold`), the shared
//!   assertions and threshold are `defaultTest`'s, and the tool's defaults are
//!   `defaultTest.vars` (promptfoo renders a value it is not given as nothing);
//! - a multi-select's value is a list, joined in the prompt as llmtool joins it, and never
//!   fanned out into several tests (`options.disableVarExpansion`);
//! - `contains`, `not_contains` (with `ignore_case`: `icontains`, `not-icontains`), `json`
//!   and `json_schema` (`is-json`), `max_cost` (`cost`), `max_latency_ms` (`latency`) and
//!   `judge` (`llm-rubric`) have promptfoo types of their own; `equals` and `starts_with`
//!   take promptfoo's with llmtool's trimming as a `transform`; `one_of`, `max_length`,
//!   `max_tokens` and a regular expression promptfoo's would read otherwise are `javascript`
//!   assertions that compute what llmtool's do;
//! - `json_path` and `similar` (promptfoo's `similar` compares embeddings) are left out, each
//!   with a warning at its place;
//! - the tool's expected output is enforced on the answer by a `transform` before the
//!   assertions see it (`promptfoo_output`), as `llmtool test` enforces it before its own.

pub mod import;
mod output;

use serde_json::{Map, Value, json};

use crate::Converted;
use crate::codes::DROPPED_FIELD;
use crate::prompt_files::{jinja_literal, jinja_prompt, yaml};
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::document::Document;
use llmtool_format::suite::{Assertion, Check, TestFile};
use llmtool_format::template::{ToolTemplate, Value as TemplateValue};

/// The files of an export: the config, and the prompt file it names.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptfooFiles {
    /// `promptfooconfig.yaml`.
    pub config: String,
    /// The prompt file's name (`NAME.prompt.json`) and text.
    pub prompt_file: (String, String),
}

/// The config's file name.
pub const CONFIG_FILE: &str = "promptfooconfig.yaml";

/// `tests` (the test file) and `tool` (its tool file, free of errors, named `name`) for
/// promptfoo, run on `models` (the tool's own `model_version` when none is given); `None`
/// when the tool file has errors.
pub fn export(
    tests: &TestFile,
    tool: &Document,
    name: &str,
    models: &[String],
) -> Option<Converted<PromptfooFiles>> {
    let parsed = tool.tool.as_ref()?;
    let (prompt, names) = jinja_prompt(tool)?;
    let template = ToolTemplate::new(parsed);
    let mut diagnostics = Vec::new();
    // The variables by their names in the tool, with their names in the prompt.
    let renamed: Vec<(String, String, bool)> = template
        .variables()
        .iter()
        .zip(&names)
        .map(|(variable, (theirs, list))| (variable.name.clone(), theirs.clone(), *list))
        .collect();
    let prompt_file = format!("{name}.prompt.json");
    // A chat tool's turns are the file's messages (the role lines are plain text in Jinja).
    let messages: Vec<Value> = if template.is_chat() {
        llmtool_format::chat::split(&prompt)
            .into_iter()
            .map(|turn| json!({ "role": turn.role, "content": turn.text }))
            .collect()
    } else {
        vec![json!({ "role": "user", "content": prompt })]
    };
    let prompt_text = serde_json::to_string_pretty(&messages).unwrap_or_default() + "\n";

    let mut config = Map::new();
    let title = parsed.name().unwrap_or(name);
    config.insert("description".into(), json!(format!("{title} (from llmtool's test file)")));
    config.insert(
        "prompts".into(),
        json!([{ "id": format!("file://{prompt_file}"), "label": name }]),
    );
    let wanted: Vec<String> = if models.is_empty() { tool_models(parsed) } else { models.to_vec() };
    let json: Value = serde_json::from_str(&tool.text).unwrap_or_default();
    let parameters = json["metadata"].get("parameters").filter(|p| p.is_object()).cloned();
    let providers: Vec<Value> =
        wanted.iter().map(|model| provider(model, parameters.as_ref())).collect();
    config.insert("providers".into(), Value::Array(providers));

    let mut default_test = Map::new();
    let defaults: Map<String, Value> = template
        .variables()
        .iter()
        .zip(&renamed)
        .filter_map(|(variable, (_, theirs, _))| {
            let default = variable.default.as_ref()?;
            Some((theirs.clone(), template_value(default)))
        })
        .collect();
    if !defaults.is_empty() {
        default_test.insert("vars".into(), Value::Object(defaults));
    }
    let shared = assertions(&tests.shared, &mut diagnostics);
    if !shared.is_empty() {
        default_test.insert("assert".into(), Value::Array(shared));
    }
    if let Some(threshold) = tests.threshold {
        default_test.insert("threshold".into(), json!(threshold));
    }
    let mut options = json!({ "disableVarExpansion": true });
    let expected = llmtool_format::output::OutputSpec::of(parsed);
    if let Some(transform) = output::transform(&expected, &mut diagnostics) {
        options["transform"] = json!(transform);
    }
    default_test.insert("options".into(), options);
    config.insert("defaultTest".into(), Value::Object(default_test));

    let mut cases = Vec::new();
    for (index, case) in tests.cases.iter().enumerate() {
        let mut test = Map::new();
        test.insert("description".into(), json!(case.name));
        let vars: Map<String, Value> = case
            .vars
            .iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(name, value)| {
                let theirs = renamed.iter().find(|(ours, _, _)| ours == name);
                let key = theirs.map_or(name.as_str(), |(_, theirs, _)| theirs.as_str());
                (key.to_owned(), given_value(value))
            })
            .collect();
        if !vars.is_empty() {
            test.insert("vars".into(), Value::Object(vars));
        }
        let asserted = assertions(&case.assertions, &mut diagnostics);
        if !asserted.is_empty() {
            test.insert("assert".into(), Value::Array(asserted));
        }
        if let Some(threshold) = case.threshold {
            test.insert("threshold".into(), json!(threshold));
        }
        // Which case a result is, whatever order promptfoo gives them in.
        test.insert("metadata".into(), json!({ "llmtool_case": index }));
        cases.push(Value::Object(test));
    }
    config.insert("tests".into(), Value::Array(cases));
    let files =
        PromptfooFiles { config: yaml::document(&config), prompt_file: (prompt_file, prompt_text) };
    Some(Converted { value: files, diagnostics })
}

/// The tool's models (`model_version`), or promptfoo's usual OpenAI one when it names none.
fn tool_models(tool: &llmtool_format::model::Tool) -> Vec<String> {
    let models: Vec<String> = tool
        .metadata
        .as_ref()
        .and_then(|m| m.model_version.as_ref())
        .map(|versions| versions.value.iter().map(|v| v.value.clone()).collect())
        .unwrap_or_default();
    if models.is_empty() { vec!["gpt-4o-mini".to_owned()] } else { models }
}

/// promptfoo's provider for `model` (`provider/model` or a bare name), with the tool's
/// parameters and none of promptfoo's own defaults (it would send a temperature of 0 and 1,024
/// tokens otherwise).
fn provider(model: &str, parameters: Option<&Value>) -> Value {
    let bare = model.rsplit('/').next().unwrap_or(model);
    let id = if bare.starts_with("claude") {
        format!("anthropic:messages:{bare}")
    } else if bare.starts_with("gemini") {
        format!("google:{bare}")
    } else {
        format!("openai:chat:{bare}")
    };
    let mut config = match parameters {
        Some(Value::Object(parameters)) => parameters.clone(),
        _ => Map::new(),
    };
    config.insert("omitDefaults".into(), json!(true));
    json!({ "id": id, "label": model, "config": config })
}

/// A default as promptfoo takes a value: text, or a list of texts.
fn template_value(value: &TemplateValue) -> Value {
    match value {
        TemplateValue::Text(text) => json!(text),
        TemplateValue::List(items) => json!(items),
    }
}

/// A case's value (read as `render --vars` reads one) as promptfoo takes it: a number or a
/// boolean as its JSON text, a list as a list of texts.
fn given_value(value: &Value) -> Value {
    match value {
        Value::String(_) => value.clone(),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| item.as_str().map_or_else(|| json!(item.to_string()), |s| json!(s)))
                .collect(),
        ),
        other => json!(other.to_string()),
    }
}

/// The assertions promptfoo has a counterpart for; a warning at each of the others.
fn assertions(list: &[Assertion], diagnostics: &mut Vec<Diagnostic>) -> Vec<Value> {
    let mut out = Vec::new();
    for assertion in list {
        let Some(mut written) = assertion_value(&assertion.check) else {
            let what = match &assertion.check {
                Check::JsonPath { .. } => "`json_path` has no promptfoo counterpart",
                Check::Similar { .. } => {
                    "`similar` compares texts by characters; promptfoo's compares embeddings"
                }
                Check::ImageSize(_) | Check::ImageFormat(_) => {
                    "promptfoo's assertions read text, not an image tool's pictures"
                }
                _ => "the assertion has no promptfoo counterpart",
            };
            diagnostics.push(
                Diagnostic::new(&DROPPED_FIELD, format!("{what}: left out of the export"))
                    .at(assertion.span),
            );
            continue;
        };
        if (assertion.weight - 1.0).abs() > f64::EPSILON {
            written.insert("weight".into(), json!(assertion.weight));
        }
        out.push(Value::Object(written));
    }
    out
}

/// One assertion as promptfoo writes it, when it has a counterpart. Texts are written as
/// Nunjucks literals: promptfoo renders an assertion's value with the test's values first.
fn assertion_value(check: &Check) -> Option<Map<String, Value>> {
    let text = |kind: &str, value: &str| json!({ "type": kind, "value": jinja_literal(value) });
    let javascript = |code: String| json!({ "type": "javascript", "value": jinja_literal(&code) });
    let value = match check {
        Check::Equals(expected) => {
            let mut equals = text("equals", expected.trim());
            equals["transform"] = json!("output.trim()");
            equals
        }
        Check::OneOf(values) => {
            let trimmed: Vec<&str> = values.iter().map(|v| v.trim()).collect();
            javascript(format!("{}.includes(output.trim())", json!(trimmed)))
        }
        Check::Contains { text: needle, ignore_case } => {
            text(if *ignore_case { "icontains" } else { "contains" }, needle)
        }
        Check::NotContains { text: needle, ignore_case } => {
            text(if *ignore_case { "not-icontains" } else { "not-contains" }, needle)
        }
        Check::Regex(pattern) if portable(pattern) => text("regex", pattern),
        Check::Regex(pattern) => {
            let (translated, flags) = js_pattern(pattern);
            javascript(format!("new RegExp({}, {}).test(output)", json!(translated), json!(flags)))
        }
        Check::StartsWith(prefix) => {
            let mut starts = text("starts-with", prefix);
            starts["transform"] = json!("output.trimStart()");
            starts
        }
        Check::Json => json!({ "type": "is-json" }),
        Check::JsonSchema(schema) => {
            let mut schema = schema.clone();
            if let Some(object) = schema.as_object_mut() {
                object.remove("$schema");
            }
            json!({ "type": "is-json", "value": schema })
        }
        Check::MaxLength(most) => javascript(format!("[...output].length <= {most}")),
        Check::MaxTokens(most) => javascript(format!(
            "(context.providerResponse?.tokenUsage?.completion ?? Infinity) <= {most}"
        )),
        Check::MaxCost(most) => json!({ "type": "cost", "threshold": most }),
        Check::MaxLatencyMs(most) => json!({ "type": "latency", "threshold": most }),
        Check::Judge { rubric, threshold, model } => {
            let mut judge = json!({ "type": "llm-rubric", "value": jinja_literal(rubric), "threshold": threshold });
            // The grader llmtool would use, as promptfoo names a provider.
            if let Some(model) = model.as_deref().filter(|m| *m != "local") {
                judge["provider"] = provider(model, None)["id"].clone();
            }
            judge
        }
        Check::JsonPath { .. }
        | Check::Similar { .. }
        | Check::ImageSize(_)
        | Check::ImageFormat(_) => return None,
    };
    value.as_object().cloned()
}

/// Whether a pattern means the same to JavaScript's `RegExp` (no flags) as to Rust's `regex`:
/// ASCII letters, digits, spaces and the punctuation both read alike, with no escapes, no `.`
/// (which differs on line ends and characters beyond 16 bits) and no groups with flags.
fn portable(pattern: &str) -> bool {
    pattern
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || " -_,;:!@#%&=<>'\"/[]()|+*?^${}".contains(c))
        && !pattern.contains("(?")
        && !pattern.contains("&&")
        && !pattern.contains("--")
        && !pattern.contains("~~")
}

/// Rust's Unicode word characters, as JavaScript (with `u`) writes them inside a class.
const WORD: &str = "\\p{L}\\p{M}\\p{Nd}\\p{Pc}";

/// A Rust pattern as JavaScript's, with its flags (always `u`, so that classes and `.` mean
/// characters, not UTF-16 units): leading inline flags become flags; `\d`, `\w` and `\b` (and
/// their negations) are Unicode's, as in Rust; `.` leaves out only a newline; a script class
/// names its script; `\A` and `\z` are `^` and `$`.
fn js_pattern(pattern: &str) -> (String, String) {
    let mut flags = String::from("u");
    let mut rest = pattern;
    if let Some(inner) = rest.strip_prefix("(?")
        && let Some(end) = inner.find(')')
        && inner[..end].chars().all(|c| matches!(c, 'i' | 'm' | 's'))
    {
        flags.push_str(&inner[..end]);
        rest = &inner[end + 1..];
    }
    let dot_all = flags.contains('s');
    let mut out = String::new();
    let mut in_class = false;
    let mut chars = rest.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                continue;
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
                continue;
            }
            '.' if !in_class && !dot_all => {
                out.push_str("[^\\n]");
                continue;
            }
            '\\' => {}
            _ => {
                out.push(c);
                continue;
            }
        }
        match chars.next() {
            Some((_, 'A')) => out.push('^'),
            Some((_, 'z')) => out.push('$'),
            Some((_, 'd')) => out.push_str("\\p{Nd}"),
            Some((_, 'D')) => out.push_str("\\P{Nd}"),
            Some((_, 'w')) if in_class => out.push_str(WORD),
            Some((_, 'w')) => out.push_str(&format!("[{WORD}]")),
            Some((_, 'W')) => out.push_str(&format!("[^{WORD}]")),
            Some((_, 'b')) => {
                out.push_str(&format!("(?:(?<=[{WORD}])(?![{WORD}])|(?<![{WORD}])(?=[{WORD}]))"))
            }
            Some((_, 'B')) => {
                out.push_str(&format!("(?:(?<=[{WORD}])(?=[{WORD}])|(?<![{WORD}])(?![{WORD}]))"))
            }
            Some((_, class @ ('p' | 'P'))) if rest[at + 2..].starts_with('{') => {
                let end = rest[at + 2..].find('}').map_or(rest.len(), |e| at + 2 + e);
                let name = &rest[at + 3..end];
                // General categories (`L`, `Lu`, `Nd`...) are the same; other names are scripts.
                let general = name.len() <= 2 && name.chars().all(|c| c.is_ascii_alphabetic());
                let named = if general || name.contains('=') {
                    name.to_owned()
                } else {
                    format!("Script={name}")
                };
                out.push_str(&format!("\\{class}{{{named}}}"));
                while chars.peek().is_some_and(|(i, _)| *i <= end) {
                    chars.next();
                }
            }
            Some((_, other)) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    (out, flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_patterns_become_javascript_ones() {
        assert_eq!(
            js_pattern("(?i)hello\\s+\\p{Hangul}{2,}"),
            ("hello\\s+\\p{Script=Hangul}{2,}".into(), "ui".into())
        );
        assert_eq!(js_pattern("\\Aa\\p{L}\\z"), ("^a\\p{L}$".into(), "u".into()));
        assert_eq!(js_pattern("\\d.[\\w-]").0, "\\p{Nd}[^\\n][\\p{L}\\p{M}\\p{Nd}\\p{Pc}-]");
        assert!(portable("token[0-9]+"));
        assert!(!portable("token\\d+") && !portable("a.b") && !portable("é"));
    }
}
