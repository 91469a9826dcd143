//! A promptfoo config (`promptfooconfig.yaml`) read back as tools and their test files: each
//! prompt is a tool, and the tests are each tool's cases. The reverse of [`super`],
//! for configs written by hand as well: prompts inline or in files beside the config (text,
//! several split at `---` lines; chat messages as JSON or YAML), Nunjucks placeholders, the
//! providers' models and settings, `defaultTest` and the assertions llmtool has a
//! counterpart for. A test's list value is run once per item, as promptfoo does unless
//! `disableVarExpansion` is set.

use serde_json::{Map, Value, json};

use crate::codes::{DROPPED_FIELD, INVALID_SOURCE};
use crate::prompt_files::{chat, from_jinja, jinja_text, yaml_read};
use crate::{Converted, SiblingFiles};
use llmtool_format::diagnostic::Diagnostic;

/// One prompt of a config, as a tool file and its test file.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedSuite {
    /// The file name both are named after (`NAME.json`, `NAME.tests.json`).
    pub name: String,
    /// The tool file (canonical text).
    pub tool: String,
    /// The test file (JSON).
    pub tests: String,
}

/// Prompt parameters llmtool knows, as promptfoo's providers name them in `config`.
const PARAMETERS: [&str; 5] =
    ["temperature", "max_tokens", "top_p", "frequency_penalty", "presence_penalty"];

/// The most cases a config may make (a test's list values make one per combination).
const MAX_CASES: usize = 10_000;

/// Extensions of the prompt files read as text.
const TEXT_FILES: [&str; 3] = ["txt", "md", "j2"];

/// Reads a promptfoo config (`text`), reaching the files it names through `files`.
pub fn import(
    text: &str,
    files: &dyn SiblingFiles,
) -> Result<Converted<Vec<ImportedSuite>>, Box<Diagnostic>> {
    let config =
        yaml_read::from_str(text).map_err(|_| refused("the config is not YAML or JSON"))?;
    let whole = config;
    let config = whole.as_object().ok_or_else(|| refused("the config is not a mapping"))?;
    let mut diagnostics = Vec::new();
    let prompts = prompts(config.get("prompts"), files)
        .map_err(|problem| placed(problem, text, "prompts"))?;
    let (models, parameters) = providers(config.get("providers").or_else(|| config.get("targets")));
    let default_test =
        config.get("defaultTest").and_then(Value::as_object).cloned().unwrap_or_default();
    let expand_by_default = !disables_expansion(&default_test);
    say_transforms(&default_test, "defaultTest", &mut diagnostics);
    let mut shared = Vec::new();
    for (index, assertion) in list(default_test.get("assert")).iter().enumerate() {
        shared.extend(assertion_values(
            &resolved(assertion, &whole),
            &format!("defaultTest.assert[{index}]"),
            &mut diagnostics,
        ));
    }
    let defaults = default_test.get("vars").and_then(Value::as_object).cloned().unwrap_or_default();
    let tests = match config.get("tests") {
        None => Vec::new(),
        Some(Value::Array(tests)) => tests.clone(),
        Some(Value::String(reference)) => {
            let problem = refused(format!(
                "`tests: {reference}` names tests kept elsewhere (a file, a generator): write them inline in the config to import them"
            ));
            return Err(placed(problem, text, "tests"));
        }
        Some(_) => return Err(placed(refused("`tests` is not a list"), text, "tests")),
    };
    let mut cases = Vec::new();
    for (index, test) in tests.iter().enumerate() {
        let Some(entry) = test.as_object() else {
            return Err(refused(format!("`tests[{index}]` is not a mapping")));
        };
        say_transforms(entry, &format!("tests[{index}]"), &mut diagnostics);
        let mut assertions = Vec::new();
        for (at, assertion) in list(entry.get("assert")).iter().enumerate() {
            assertions.extend(assertion_values(
                &resolved(assertion, &whole),
                &format!("tests[{index}].assert[{at}]"),
                &mut diagnostics,
            ));
        }
        let name = test
            .get("description")
            .and_then(Value::as_str)
            .map_or_else(|| format!("test {}", index + 1), str::to_owned);
        let vars = entry.get("vars").and_then(Value::as_object).cloned().unwrap_or_default();
        // A test's own `options` win over `defaultTest`'s, as promptfoo merges them.
        let expand = entry
            .get("options")
            .and_then(|o| o.get("disableVarExpansion"))
            .and_then(Value::as_bool)
            .map_or(expand_by_default, |disabled| !disabled);
        let room = MAX_CASES - cases.len();
        let expanded = if expand { expansions(&vars, room) } else { Some(vec![vars]) };
        let Some(expanded) = expanded else {
            let problem = refused(format!(
                "`tests[{index}]` makes more than {MAX_CASES} cases in all from its lists of values (one per combination)"
            ));
            return Err(placed(problem, text, "tests"));
        };
        let several = expanded.len() > 1;
        for (number, vars) in expanded.into_iter().enumerate() {
            let mut case = Map::new();
            case.insert(
                "name".into(),
                json!(if several { format!("{name} ({})", number + 1) } else { name.clone() }),
            );
            let vars: Map<String, Value> =
                vars.into_iter().map(|(key, value)| (key, as_text(&value))).collect();
            case.insert("vars".into(), Value::Object(vars));
            if !assertions.is_empty() {
                case.insert("assert".into(), Value::Array(assertions.clone()));
            }
            if let Some(threshold) = entry.get("threshold").filter(|t| t.is_number()) {
                case.insert("threshold".into(), threshold.clone());
            }
            cases.push(Value::Object(case));
        }
    }
    let several = prompts.len() > 1;
    let mut suites = Vec::new();
    for (index, (label, template, is_chat)) in prompts.iter().enumerate() {
        let (prompt, mut variables) = from_jinja(template, &format!("prompt `{label}`"))?;
        // The values the tests give that the prompt does not place are variables too (unused:
        // `check` says so), so that the cases read against the tool.
        let given = defaults.keys().chain(tests.iter().flat_map(|t| {
            t.get("vars").and_then(Value::as_object).into_iter().flat_map(Map::keys)
        }));
        for name in given {
            if !variables.iter().any(|v| v["name"].as_str() == Some(name)) {
                variables.push(json!({ "name": name, "type": "text" }));
            }
        }
        for variable in &mut variables {
            let name = variable["name"].as_str().unwrap_or_default().to_owned();
            if let Some(default) = defaults.get(&name) {
                variable["default"] = as_text(default);
            }
        }
        let mut metadata = Map::new();
        let title = match config.get("description").and_then(Value::as_str) {
            Some(description) if !several => description.to_owned(),
            _ => label.clone(),
        };
        metadata.insert("prompt_name".into(), json!(title));
        if let Some(description) = config.get("description").and_then(Value::as_str) {
            metadata.insert("description".into(), json!(description));
        }
        if !models.is_empty() {
            metadata.insert("model_version".into(), json!(models));
        }
        if !parameters.is_empty() {
            metadata.insert("parameters".into(), Value::Object(parameters.clone()));
        }
        metadata.insert("variables".into(), Value::Array(variables));
        let mut tool = json!({ "model_prompt": prompt, "metadata": metadata });
        if *is_chat {
            tool["x-chat"] = json!(true);
        }
        let name =
            llmtool_format::naming::slug(label, llmtool_format::naming::MAX_NAME).replace('_', "-");
        let name = if several && suites.iter().any(|s: &ImportedSuite| s.name == name) {
            format!("{name}-{index}")
        } else {
            name
        };
        let mut tests = Map::new();
        tests.insert("tool".into(), json!(format!("{name}.json")));
        if let Some(threshold) = default_test.get("threshold").filter(|t| t.is_number()) {
            tests.insert("threshold".into(), threshold.clone());
        }
        if !shared.is_empty() {
            tests.insert("assert".into(), Value::Array(shared.clone()));
        }
        tests.insert("cases".into(), Value::Array(cases.clone()));
        suites.push(ImportedSuite {
            name,
            tool: crate::prompt_files::canonical(&tool),
            tests: serde_json::to_string_pretty(&Value::Object(tests)).unwrap_or_default() + "\n",
        });
    }
    Ok(Converted { value: suites, diagnostics })
}

fn refused(message: impl Into<String>) -> Box<Diagnostic> {
    Box::new(Diagnostic::new(&INVALID_SOURCE, message.into()))
}

/// `problem`, placed at the key `key` of the config `text` (the first line that writes it).
fn placed(problem: Box<Diagnostic>, text: &str, key: &str) -> Box<Diagnostic> {
    if problem.primary.is_some() {
        return problem;
    }
    match crate::prompt_files::front_matter::key_span(text, &[key]) {
        Some(span) => Box::new(problem.at(span)),
        None => problem,
    }
}

/// An assertion that is a JSON reference (`$ref: "#/assertionTemplates/x"`, which promptfoo
/// resolves) replaced by what it names in the config.
fn resolved(assertion: &Value, config: &Value) -> Value {
    let pointer = assertion.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#'));
    let found = pointer.and_then(|pointer| config.pointer(pointer).cloned());
    found.unwrap_or_else(|| assertion.clone())
}

/// A value that may be one item or a list, as a list.
fn list(value: Option<&Value>) -> Vec<Value> {
    match value {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::Null) | None => Vec::new(),
        Some(one) => vec![one.clone()],
    }
}

/// Says that a test's `options.transform` (or the older `postprocess`), code that changes the
/// answer before the assertions, is left out: llmtool runs no code from a config.
fn say_transforms(test: &Map<String, Value>, at: &str, diagnostics: &mut Vec<Diagnostic>) {
    for key in ["transform", "postprocess"] {
        let Some(code) = test.get("options").and_then(|o| o.get(key)) else { continue };
        let ours = code.as_str().is_some_and(|code| code.starts_with(super::output::MARK));
        let why = if ours {
            "it is the code llmtool writes to enforce a tool's expected output, which belongs in the tool's `expected_output`"
        } else {
            "it changes the answer with code before the assertions, and llmtool runs no code from a config; the assertions see the answer as the tool's expected output leaves it"
        };
        diagnostics.push(Diagnostic::new(
            &DROPPED_FIELD,
            format!("`{at}.options.{key}` is left out: {why}"),
        ));
    }
}

/// Whether `options.disableVarExpansion` is set on a test (or `defaultTest`).
fn disables_expansion(test: &Map<String, Value>) -> bool {
    test.get("options").and_then(|o| o.get("disableVarExpansion")) == Some(&Value::Bool(true))
}

/// The value sets a test's `vars` stand for: one per combination of its list values.
/// promptfoo expands a list whose first item is text, as it does; `None` when the sets would
/// be more than `room`.
fn expansions(vars: &Map<String, Value>, room: usize) -> Option<Vec<Map<String, Value>>> {
    let count = vars.values().try_fold(1usize, |count, value| match value {
        Value::Array(items) if items.first().is_some_and(Value::is_string) => {
            count.checked_mul(items.len())
        }
        _ => Some(count),
    })?;
    if count > room {
        return None;
    }
    let mut sets = vec![Map::new()];
    for (key, value) in vars {
        let choices = match value {
            Value::Array(items) if items.first().is_some_and(Value::is_string) => items.clone(),
            other => vec![other.clone()],
        };
        sets = sets
            .into_iter()
            .flat_map(|set| {
                choices.iter().map(move |choice| {
                    let mut set = set.clone();
                    set.insert(key.clone(), choice.clone());
                    set
                })
            })
            .collect();
    }
    Some(sets)
}

/// A value as the text promptfoo renders it: a list's items joined with `,`, a number or a
/// boolean as written.
fn as_text(value: &Value) -> Value {
    match value {
        Value::String(_) => value.clone(),
        Value::Array(items) => json!(
            items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Value::Null => json!(""),
        other => json!(other.to_string()),
    }
}

/// The prompts of the config, each with its label and its Nunjucks text.
fn prompts(
    value: Option<&Value>,
    files: &dyn SiblingFiles,
) -> Result<Vec<(String, String, bool)>, Box<Diagnostic>> {
    let mut found = Vec::new();
    let entries: Vec<(Option<String>, String)> = match value {
        Some(Value::String(one)) => vec![(None, one.clone())],
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => Ok((None, text.clone())),
                Value::Object(object) => {
                    let raw =
                        object.get("raw").or_else(|| object.get("id")).and_then(Value::as_str);
                    let label = object.get("label").and_then(Value::as_str).map(str::to_owned);
                    raw.map(|raw| (label, raw.to_owned()))
                        .ok_or_else(|| refused("a prompt names neither `raw` nor `id`"))
                }
                _ => Err(refused("a prompt is neither text nor a mapping")),
            })
            .collect::<Result<_, _>>()?,
        Some(Value::Object(map)) => map
            .iter()
            .map(|(path, label)| (label.as_str().map(str::to_owned), path.clone()))
            .collect(),
        _ => return Err(refused("the config has no `prompts`")),
    };
    for (label, source) in entries {
        match file_reference(&source) {
            Some(name) => {
                let stem = name.rsplit('/').next().unwrap_or(name);
                let stem = stem.split('.').next().unwrap_or(stem).to_owned();
                let extension = std::path::Path::new(name)
                    .extension()
                    .map(|e| e.to_string_lossy().to_ascii_lowercase())
                    .unwrap_or_default();
                // A prompt a program makes is never opened, let alone run.
                let chat = matches!(extension.as_str(), "json" | "yaml" | "yml");
                if !chat && !TEXT_FILES.contains(&extension.as_str()) {
                    return Err(refused(format!(
                        "prompt `{source}`: a prompt made by a program (JavaScript, Python) or a file of another kind is not imported"
                    )));
                }
                let text =
                    files.read(name).map_err(|why| refused(format!("prompt `{source}`: {why}")))?;
                if chat {
                    let messages = yaml_read::from_str(&text).map_err(|_| {
                        let made = if text.contains("{%") {
                            " (a template that makes its messages with `{% ... %}` is not imported)"
                        } else {
                            ""
                        };
                        refused(format!("prompt `{source}` is not JSON or YAML{made}"))
                    })?;
                    let (text, is_chat) = chat_text(&messages, &source)?;
                    found.push((label.unwrap_or(stem), text, is_chat));
                } else {
                    // A text file holds several prompts between lines of `---`, each trimmed, as
                    // promptfoo splits them; Markdown and Jinja files hold one.
                    let pieces: Vec<String> = if extension == "txt" {
                        split_prompts(&text)
                    } else {
                        vec![text.trim_end_matches('\n').to_owned()]
                    };
                    let count = pieces.len();
                    for (index, piece) in pieces.into_iter().enumerate() {
                        let name = label.clone().unwrap_or_else(|| stem.clone());
                        let name = if count > 1 { format!("{name}-{}", index + 1) } else { name };
                        found.push((name, piece, false));
                    }
                }
            }
            None => {
                let name = label.unwrap_or_else(|| format!("prompt-{}", found.len() + 1));
                found.push((name, source, false));
            }
        }
    }
    Ok(found)
}

/// The prompts of a text file: split at each line that is `---` (whitespace around it aside),
/// each trimmed, the empty ones left out.
fn split_prompts(text: &str) -> Vec<String> {
    let mut prompts = vec![String::new()];
    for line in text.split_inclusive('\n') {
        if line.trim() == "---" {
            prompts.push(String::new());
        } else if let Some(last) = prompts.last_mut() {
            last.push_str(line);
        }
    }
    prompts.into_iter().map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect()
}

/// The file a prompt names, read as promptfoo reads one: `file://NAME`, or a one-line text that
/// looks like a path (a known extension, or a `/`).
fn file_reference(source: &str) -> Option<&str> {
    if let Some(name) = source.strip_prefix("file://") {
        return Some(name);
    }
    let looks_like_path = !source.contains('\n')
        && !source.contains(' ')
        && (source.contains('/')
            || [".txt", ".json", ".yaml", ".yml", ".md", ".j2"]
                .iter()
                .any(|ext| source.ends_with(ext)));
    looks_like_path.then_some(source)
}

/// Chat messages (a list of `role` and `content`, or `{messages: [...]}`) as one prompt: one
/// user message is its text; more are kept after their role lines.
fn chat_text(messages: &Value, source: &str) -> Result<(String, bool), Box<Diagnostic>> {
    let list = messages.get("messages").unwrap_or(messages);
    let items = list
        .as_array()
        .ok_or_else(|| refused(format!("prompt `{source}` is not a list of messages")))?;
    let mut pairs = Vec::new();
    for item in items {
        let role = item.get("role").and_then(Value::as_str);
        // Text, or a list of parts whose texts are joined (the Anthropic form).
        let content = match item.get("content") {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Array(parts)) => parts
                .iter()
                .map(|part| part.get("text").and_then(Value::as_str))
                .collect::<Option<Vec<&str>>>()
                .map(|texts| texts.concat()),
            _ => None,
        };
        let (Some(role), Some(content)) = (role, content) else {
            return Err(refused(format!(
                "prompt `{source}` has a message without a `role` and text `content`"
            )));
        };
        pairs.push((role, content));
    }
    Ok(chat::prompt_text(&pairs))
}

/// The models of the providers (`openai:chat:gpt-4o` is `gpt-4o`), and the parameters the
/// first one sets.
fn providers(value: Option<&Value>) -> (Vec<String>, Map<String, Value>) {
    let mut models = Vec::new();
    let mut parameters = Map::new();
    for provider in list(value) {
        let (id, config) = match &provider {
            Value::String(id) => (Some(id.as_str()), None),
            Value::Object(object) => (
                object.get("id").and_then(Value::as_str),
                object.get("config").and_then(Value::as_object),
            ),
            _ => (None, None),
        };
        let Some(id) = id else { continue };
        let Some(model) = provider_model(id) else { continue };
        if !model.is_empty() && !models.iter().any(|m| m == model) {
            models.push(model.to_owned());
        }
        if parameters.is_empty() {
            for (key, value) in config.into_iter().flatten() {
                if PARAMETERS.contains(&key.as_str()) {
                    parameters.insert(key.clone(), value.clone());
                }
            }
        }
    }
    (models, parameters)
}

/// The model a provider id names: what follows the provider and its kind
/// (`openai:chat:gpt-4o` is `gpt-4o`, `ollama:chat:llama3.1:8b` is `llama3.1:8b`); `None` for
/// a provider that is a program or an address (`file://`, `http`, `exec:`).
fn provider_model(id: &str) -> Option<&str> {
    if id.contains("://") || id.starts_with("exec:") || id.starts_with("python:") {
        return None;
    }
    let (_, rest) = id.split_once(':')?;
    let rest = ["chat:", "completion:", "messages:", "responses:"]
        .iter()
        .find_map(|kind| rest.strip_prefix(kind))
        .unwrap_or(rest);
    (!rest.is_empty()).then_some(rest)
}

/// One promptfoo assertion as llmtool's (none, or several for `contains-all`), with a warning
/// at `at` for one llmtool has no counterpart for.
fn assertion_values(assertion: &Value, at: &str, diagnostics: &mut Vec<Diagnostic>) -> Vec<Value> {
    let kind = assertion.get("type").and_then(Value::as_str).unwrap_or("");
    let weight = assertion.get("weight").and_then(Value::as_f64);
    let mut left_out = |why: String| {
        diagnostics
            .push(Diagnostic::new(&DROPPED_FIELD, format!("`{at}` ({kind}) is left out: {why}")));
        Vec::new()
    };
    // promptfoo renders a value with the test's values first: a value that places one cannot
    // be a fixed text.
    let text = |value: Option<&Value>| value.and_then(Value::as_str).and_then(jinja_text);
    let texts = |value: Option<&Value>| -> Option<Vec<String>> {
        match value? {
            Value::Array(items) => items.iter().map(|i| i.as_str().and_then(jinja_text)).collect(),
            Value::String(joined) => {
                jinja_text(joined).map(|t| t.split(',').map(|s| s.trim().to_owned()).collect())
            }
            _ => None,
        }
    };
    let value = assertion.get("value");
    let made: Vec<Value> = match kind {
        "equals" | "contains" | "icontains" | "not-contains" | "not-icontains" | "starts-with" => {
            let Some(expected) = text(value) else { return left_out("its value is not a fixed text".into()) };
            match kind {
                "equals" => vec![json!({ "type": "equals", "value": expected })],
                "starts-with" => vec![json!({ "type": "starts_with", "value": expected })],
                "contains" | "icontains" => vec![text_check("contains", &expected, kind == "icontains")],
                _ => vec![text_check("not_contains", &expected, kind == "not-icontains")],
            }
        }
        "contains-any" | "icontains-any" => {
            let Some(choices) = texts(value) else { return left_out("its values are not fixed texts".into()) };
            let flags = if kind == "icontains-any" { "(?i)" } else { "" };
            let alternatives: Vec<String> = choices.iter().map(|c| regex::escape(c)).collect();
            vec![json!({ "type": "regex", "value": format!("{flags}(?:{})", alternatives.join("|")) })]
        }
        "contains-all" | "icontains-all" | "not-contains-any" => {
            let Some(choices) = texts(value) else { return left_out("its values are not fixed texts".into()) };
            let (check, ignore_case) = match kind {
                "not-contains-any" => ("not_contains", false),
                other => ("contains", other == "icontains-all"),
            };
            choices.iter().map(|c| text_check(check, c, ignore_case)).collect()
        }
        "regex" => match text(value) {
            Some(pattern) if regex::Regex::new(&pattern).is_ok() => vec![json!({ "type": "regex", "value": pattern })],
            _ => return left_out("its pattern is not one Rust's `regex` reads the same way".into()),
        },
        "is-json" => match value {
            Some(Value::Object(schema)) => vec![json!({ "type": "json_schema", "value": schema })],
            None => vec![json!({ "type": "json" })],
            Some(_) => return left_out("its schema is not an inline JSON Schema".into()),
        },
        "cost" | "latency" => match assertion.get("threshold").and_then(Value::as_f64) {
            Some(most) if kind == "cost" => vec![json!({ "type": "max_cost", "value": most })],
            Some(most) => vec![json!({ "type": "max_latency_ms", "value": most.round() as u64 })],
            None => return left_out("it has no `threshold`".into()),
        },
        "llm-rubric" => {
            let Some(rubric) = text(value) else { return left_out("its rubric is not a fixed text".into()) };
            let threshold = assertion.get("threshold").and_then(Value::as_f64).unwrap_or(0.5);
            vec![json!({ "type": "judge", "rubric": rubric, "threshold": threshold })]
        }
        "javascript" => match value.and_then(Value::as_str).and_then(jinja_text).and_then(|code| from_javascript(&code)) {
            Some(check) => vec![check],
            None => return left_out("llmtool runs no JavaScript; only the checks `llmtool test --to promptfoo` writes are read back".into()),
        },
        _ => return left_out("llmtool has no counterpart".into()),
    };
    let count = made.len() as f64;
    made.into_iter()
        .map(|mut check| {
            if let Some(weight) = weight.filter(|w| (w - 1.0).abs() > f64::EPSILON) {
                check["weight"] = json!(weight / count);
            } else if count > 1.0 {
                check["weight"] = json!(1.0 / count);
            }
            check
        })
        .collect()
}

/// A `contains` or `not_contains` check, `ignore_case` said only when set.
fn text_check(kind: &str, value: &str, ignore_case: bool) -> Value {
    let mut check = json!({ "type": kind, "value": value });
    if ignore_case {
        check["ignore_case"] = json!(true);
    }
    check
}

/// The checks `llmtool test --to promptfoo` writes as JavaScript, read back.
fn from_javascript(code: &str) -> Option<Value> {
    if let Some(list) = code.strip_suffix(".includes(output.trim())") {
        let values: Vec<String> = serde_json::from_str(list).ok()?;
        return Some(json!({ "type": "one_of", "value": values }));
    }
    if let Some(most) = code.strip_prefix("[...output].length <= ") {
        return Some(json!({ "type": "max_length", "value": most.parse::<u64>().ok()? }));
    }
    if let Some(most) =
        code.strip_prefix("(context.providerResponse?.tokenUsage?.completion ?? Infinity) <= ")
    {
        return Some(json!({ "type": "max_tokens", "value": most.parse::<u64>().ok()? }));
    }
    let inner = code.strip_prefix("new RegExp(")?.strip_suffix(").test(output)")?;
    let (pattern, flags): (String, String) = serde_json::from_str(&format!("[{inner}]")).ok()?;
    let inline: String = flags.chars().filter(|c| matches!(c, 'i' | 'm' | 's')).collect();
    // What `--to promptfoo` spells out for JavaScript, back in Rust's shorthand.
    let word = "\\p{L}\\p{M}\\p{Nd}\\p{Pc}";
    let mut pattern = pattern.replace("\\p{Script=", "\\p{").replace("\\P{Script=", "\\P{");
    for (spelled, short) in [
        (format!("(?:(?<=[{word}])(?![{word}])|(?<![{word}])(?=[{word}]))"), "\\b"),
        (format!("(?:(?<=[{word}])(?=[{word}])|(?<![{word}])(?![{word}]))"), "\\B"),
        (format!("[^{word}]"), "\\W"),
        (format!("[{word}]"), "\\w"),
        (word.to_owned(), "\\w"),
        ("\\p{Nd}".to_owned(), "\\d"),
        ("\\P{Nd}".to_owned(), "\\D"),
        ("[^\\n]".to_owned(), "."),
    ] {
        pattern = pattern.replace(&spelled, short);
    }
    let pattern = if inline.is_empty() { pattern } else { format!("(?{inline}){pattern}") };
    regex::Regex::new(&pattern).ok()?;
    Some(json!({ "type": "regex", "value": pattern }))
}
