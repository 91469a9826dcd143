//! Microsoft Prompty (`.prompty`, version 2): YAML front matter with `name`, `description`,
//! `model`, `inputs` and `template`, then the prompt as a Jinja2 body under a `user:` marker.

use serde_json::{Map, Value, json};

use super::syntax::{self, Slots, handlebars, jinja};
use super::{
    ToolBuilder, ToolSource, declare_used, default_json, empty_default, filter_defaults,
    front_matter, invalid, single_model, template_problem, variable_json,
};
use crate::codes::{
    DROPPED_FIELD, INVALID_SOURCE, PEER_RENDERS_DIFFERENTLY, UNSUPPORTED_PARAMETER,
};
use crate::function::Converted;
use crate::sibling_files::{self, SiblingFiles};
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::model::VariableKind;

/// Tool parameters and the Prompty model options they are.
const OPTIONS: [(&str, &str); 7] = [
    ("temperature", "temperature"),
    ("max_tokens", "maxOutputTokens"),
    ("top_p", "topP"),
    ("top_k", "topK"),
    ("frequency_penalty", "frequencyPenalty"),
    ("presence_penalty", "presencePenalty"),
    ("seed", "seed"),
];

/// Prompty's role names: a line holding one of these and a `:` starts a new message.
const ROLES: [&str; 6] = ["system", "user", "assistant", "developer", "function", "tool"];

pub(super) fn write(source: &ToolSource) -> Converted<String> {
    let mut diagnostics = Vec::new();
    let (names, renamed) = source.template_names(jinja::is_name, &mut diagnostics);
    let mut front = Map::new();
    front.insert("name".into(), json!(source.metadata_text("prompt_name").unwrap_or("tool")));
    if let Some(description) = source.metadata_text("description") {
        front.insert("description".into(), json!(description));
    }
    let mut mapped = vec!["prompt_name", "description", "parameters"];
    let mut model = Map::new();
    if let Some(id) = single_model(source.metadata().get("model_version")) {
        model.insert("id".into(), json!(id));
        mapped.push("model_version");
    }
    if let Some(Value::Object(parameters)) = source.metadata().get("parameters") {
        model.insert("options".into(), Value::Object(options(parameters)));
    }
    let mut extras = source.extras(&mapped, renamed);
    let prompt = source.json.get("model_prompt").and_then(Value::as_str).unwrap_or("");
    let mut changes = Vec::new();
    let is_chat = source.template.is_chat();
    if is_chat {
        for turn in llmtool_format::chat::split(prompt) {
            check_rendering(&turn.text, &mut changes);
        }
    } else {
        check_rendering(prompt, &mut changes);
    }
    if !changes.is_empty() {
        // Prompty reads this prompt differently: the exact prompt is kept for import.
        extras.insert("model_prompt".into(), json!(prompt));
    }
    diagnostics.append(&mut changes);
    let mut metadata = Map::new();
    if let Some(author) = source.metadata().get("creator").and_then(|c| c["name"].as_str()) {
        metadata.insert("authors".into(), json!([author]));
    }
    if !extras.is_empty() {
        metadata.insert("llmtool".into(), Value::Object(extras));
    }
    if !metadata.is_empty() {
        front.insert("metadata".into(), Value::Object(metadata));
    }
    if !model.is_empty() {
        front.insert("model".into(), Value::Object(model));
    }
    let inputs: Map<String, Value> =
        source.variables().iter().zip(&names).map(|(v, name)| (name.clone(), input(v))).collect();
    if !inputs.is_empty() {
        front.insert("inputs".into(), Value::Object(inputs));
    }
    front.insert(
        "template".into(),
        json!({ "format": { "kind": "jinja2" }, "parser": { "kind": "prompty" } }),
    );
    let slots = Slots { names: &names, kinds: source.variables().iter().map(|v| v.kind).collect() };
    let body = jinja::write(source.pieces(), &slots);
    // A chat's role lines are Prompty's; any other prompt is one user message.
    let opening = if is_chat { "" } else { "user:\n" };
    let text = front_matter::join(&front, &format!("{opening}{body}\n"));
    Converted { value: text, diagnostics }
}

fn options(parameters: &Map<String, Value>) -> Map<String, Value> {
    let mut options = Map::new();
    let mut other = Map::new();
    for (key, value) in parameters {
        match OPTIONS.iter().find(|(ours, _)| ours == key) {
            Some((_, theirs)) => {
                options.insert((*theirs).into(), value.clone());
            }
            None if key == "stop" && value.is_array() => {
                options.insert("stopSequences".into(), value.clone());
            }
            None => {
                other.insert(key.clone(), value.clone());
            }
        }
    }
    if !other.is_empty() {
        options.insert("additionalProperties".into(), Value::Object(other));
    }
    options
}

fn input(variable: &llmtool_format::template::VariableSpec) -> Value {
    let strings = || json!(variable.allowed_values);
    let mut input = match variable.kind {
        VariableKind::Text => json!({ "kind": "string" }),
        VariableKind::SingleSelect => json!({ "kind": "string", "enumValues": strings() }),
        VariableKind::MultiSelect => {
            json!({ "kind": "array", "items": { "kind": "string", "enumValues": strings() } })
        }
    };
    if let Some(description) = &variable.description {
        input["description"] = json!(description);
    }
    match default_json(variable) {
        Some(default) => input["default"] = default,
        None => input["required"] = json!(true),
    }
    input
}

/// Warnings for prompts that Prompty's parser changes: it splits messages at role lines and
/// trims the newlines around each message.
fn check_rendering(prompt: &str, diagnostics: &mut Vec<Diagnostic>) {
    if prompt.starts_with('\n') || prompt.ends_with('\n') {
        diagnostics.push(Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            "Prompty trims the newlines at the start and end of a message",
        ));
    }
    if prompt.contains([
        '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}', '\u{2029}',
    ]) {
        diagnostics.push(Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            "Prompty splits the prompt into lines and joins them with `\\n`: other line breaks become `\\n`",
        ));
    }
    if let Some(line) = prompt.lines().find(|line| is_role_line(line)) {
        diagnostics.push(Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            format!("Prompty reads the line `{}` as the start of another message", line.trim()),
        ));
    }
}

fn is_role_line(line: &str) -> bool {
    let line = line.trim();
    let line = line.strip_prefix('#').unwrap_or(line).trim_start();
    let Some(body) = line.strip_suffix(':') else { return false };
    let role = body.split('[').next().unwrap_or(body).trim();
    ROLES.iter().any(|r| r.eq_ignore_ascii_case(role))
}

/// The template languages Prompty renders.
enum Language {
    Jinja,
    /// Mustache, read with the Handlebars reader: its variables are Mustache's, and its
    /// sections and partials are refused the same way.
    Mustache,
}

/// The language the front matter's `template` names (`template: mustache`,
/// `template: {format: mustache}` or `template: {format: {kind: mustache}}`); Jinja when none.
/// The template language the front matter names (found in `front_text`, for the place of an
/// error): Jinja2 by default. Nunjucks reads what llmtool reads of Jinja (text, values, raw
/// blocks, comments, `-` trimming) the same way, so it is read as Jinja.
fn template_language(
    front: &Map<String, Value>,
    front_text: &str,
) -> Result<Language, Box<Diagnostic>> {
    let (format, name) = template_format(front);
    match name.map(str::to_ascii_lowercase).as_deref() {
        None | Some("jinja2" | "jinja" | "nunjucks") => Ok(Language::Jinja),
        Some("mustache") => Ok(Language::Mustache),
        Some(other) => {
            let problem = Diagnostic::new(
                &INVALID_SOURCE,
                format!(
                    "the template language `{other}` is not one llmtool reads (jinja2, nunjucks, mustache)"
                ),
            );
            let path: &[&str] =
                if format.is_object() { &["template", "format", "kind"] } else { &["template"] };
            Err(Box::new(match front_matter::key_span(front_text, path) {
                Some(span) => problem.at(span),
                None => problem,
            }))
        }
    }
}

/// Whether the front matter's template language is Jinja2 as Prompty's Python runtime renders
/// it (the default), rather than Nunjucks or Mustache.
fn renders_in_python(front: &Map<String, Value>) -> bool {
    let (_, name) = template_format(front);
    matches!(name.map(str::to_ascii_lowercase).as_deref(), None | Some("jinja2" | "jinja"))
}

/// The front matter's template format (`template: mustache`, `template: {format: mustache}`
/// or `template: {format: {kind: mustache}}`) and the language it names, if any.
fn template_format(front: &Map<String, Value>) -> (&Value, Option<&str>) {
    let template = front.get("template");
    let format = template.and_then(|t| t.get("format")).unwrap_or(template.unwrap_or(&Value::Null));
    let name = match format {
        Value::String(name) => Some(name.as_str()),
        Value::Object(format) => format.get("kind").and_then(Value::as_str),
        _ => None,
    };
    (format, name)
}

/// Where the first Mustache tag that escapes its value is in `body` (`{{name}}`, not
/// `{{{name}}}`, `{{&name}}`, a comment, a section or a partial).
fn escaped_value(body: &str) -> Option<std::ops::Range<usize>> {
    body.match_indices("{{").map(|(at, _)| at).find_map(|at| {
        let inner = &body[at + 2..];
        let first = inner.chars().next()?;
        if matches!(first, '{' | '&' | '!' | '#' | '/' | '^' | '>' | '=') {
            return None;
        }
        let end = inner.find("}}")?;
        Some(at..at + 2 + end + 2)
    })
}

/// The front-matter keys the reader maps (the others are left out with a warning).
const PROMPTY_MAPPED: [&str; 8] =
    ["name", "description", "model", "inputs", "outputs", "template", "metadata", "authors"];

/// What `model` says: a model name (a plain string, `id`, or a 1.x deployment) and parameters
/// (`options`, or 1.x `parameters`); the rest (`api`, `connection`, `provider`...) is left out
/// with a warning.
fn read_model(
    model: Option<&Value>,
    metadata: &mut Map<String, Value>,
    dropped: &mut impl FnMut(&[&str], String),
) {
    let model = match model {
        Some(Value::String(name)) if !name.trim().is_empty() => {
            metadata.insert("model_version".into(), json!(name.trim()));
            return;
        }
        Some(Value::Object(model)) => model,
        _ => return,
    };
    let configuration = model.get("configuration").and_then(Value::as_object);
    let deployment = ["azure_deployment", "name", "model"]
        .iter()
        .find_map(|key| configuration.and_then(|c| c.get(*key)).and_then(Value::as_str));
    let name = model.get("id").and_then(Value::as_str).filter(|id| !id.is_empty()).or(deployment);
    if let Some(name) = name.filter(|n| !n.starts_with("${")) {
        metadata.insert("model_version".into(), json!(name));
    }
    let options =
        model.get("options").or_else(|| model.get("parameters")).and_then(Value::as_object);
    if let Some(options) = options {
        metadata.insert("parameters".into(), Value::Object(parameters(options)));
    }
    for key in model.keys() {
        if !["id", "options", "parameters", "configuration"].contains(&key.as_str()) {
            dropped(
                &["model", key],
                format!(
                    "`model.{key}` says how to reach the model, which a tool leaves to its runner: left out"
                ),
            );
        }
    }
    for key in configuration.into_iter().flat_map(|c| c.keys()) {
        if !["azure_deployment", "name", "model"].contains(&key.as_str()) {
            dropped(
                &["model", "configuration", key],
                format!(
                    "`model.configuration.{key}` says how to reach the model, which a tool leaves to its runner: left out"
                ),
            );
        }
    }
}

/// Reads a Prompty file; `files` reaches the files its `${file:NAME}` references name.
pub(super) fn read(
    text: &str,
    files: &dyn SiblingFiles,
) -> Result<Converted<Value>, Box<Diagnostic>> {
    let mut diagnostics = Vec::new();
    let (front, body) = front_matter::split(text)?;
    let body_at = text.len() - body.len();
    let (role_line, template, is_chat) = message_text(body, body_at, &mut diagnostics)?;
    let read = match template_language(&front, &text[..body_at])? {
        Language::Jinja => jinja::read(&template),
        Language::Mustache => {
            if let Some(escaped) = escaped_value(body) {
                let at = body_at + escaped.start;
                diagnostics.push(
                    Diagnostic::new(
                        &PEER_RENDERS_DIFFERENTLY,
                        format!(
                            "Mustache writes `<`, `>`, `&` and quotes in the value of `{}` as HTML entities, and a tool inserts values as given; write `{{{{{{...}}}}}}` in the source for Prompty to insert it as given too",
                            &body[escaped.clone()]
                        ),
                    )
                    .at(llmtool_format::span::Span::new(at, at + escaped.len())),
                );
            }
            handlebars::read(&template)
        }
    };
    let mut parts = read.map_err(|e| template_problem(text, body_at, "the template", e))?;
    if let Some(role_line) = role_line {
        parts.insert(0, syntax::Part::Literal(role_line.to_owned()));
    }
    let mut metadata = Map::new();
    if let Some(name) = front.get("name").and_then(Value::as_str) {
        metadata.insert("prompt_name".into(), json!(name));
    }
    if let Some(description) = front.get("description").and_then(Value::as_str) {
        metadata.insert("description".into(), json!(description));
    }
    let front_text = &text[..body_at];
    let mut located = 0;
    let mut dropped = |path: &[&str], what: String| {
        diagnostics.push(front_matter::dropped_key(front_text, path, what, &mut located));
    };
    read_model(front.get("model"), &mut metadata, &mut dropped);
    let format = front.get("template").and_then(|t| t.get("format"));
    if format.and_then(|f| f.get("strict")) == Some(&Value::Bool(true)) {
        dropped(
            &["template", "format", "strict"],
            "`strict` makes Prompty refuse a value that would start a message of its own (a line such as `system:`); a tool inserts values as given: left out".into(),
        );
    }
    if front.get("outputs").is_some_and(|o| {
        o.as_object().is_some_and(|o| !o.is_empty()) || o.as_array().is_some_and(|o| !o.is_empty())
    }) {
        // The answer is an object with these fields: JSON, whose fields a tool does not name.
        metadata.insert("expected_output".into(), json!({ "format": "JSON" }));
        dropped(&["outputs"], "`outputs` names the fields of a JSON answer; the tool expects JSON, without their names and types".into());
    }
    let authors =
        front.get("authors").or_else(|| front.get("metadata").and_then(|m| m.get("authors")));
    if let Some(first) =
        authors.and_then(Value::as_array).and_then(|a| a.first()).and_then(Value::as_str)
    {
        metadata.insert("creator".into(), json!({ "name": first }));
        if authors.and_then(Value::as_array).is_some_and(|a| a.len() > 1) {
            let path: &[&str] =
                if front.contains_key("authors") { &["authors"] } else { &["metadata", "authors"] };
            dropped(
                path,
                "a tool has one creator: the first author is kept, the others are left out".into(),
            );
        }
    }
    if let Some(Value::Object(more)) = front.get("metadata") {
        for key in more.keys().filter(|k| !["authors", "llmtool"].contains(&k.as_str())) {
            dropped(
                &["metadata", key],
                format!("`metadata.{key}` has no place in a tool file: left out"),
            );
        }
    }
    for key in front.keys().filter(|k| !PROMPTY_MAPPED.contains(&k.as_str())) {
        let why = match key.as_str() {
            "tools" => {
                "Prompty's tools are the application's code, not a tool file's: name what the prompt may call in `metadata.functions` (a built-in, a library tool or an MCP server's function)"
            }
            "sample" => "sample values for trying the prompt, not defaults",
            _ => "no place in a tool file",
        };
        dropped(&[key], format!("`{key}` is left out: {why}"));
    }
    // A value's default may be written in the template (`{{ name | default("you") }}`).
    let filtered = filter_defaults(&parts, (text, body_at))?;
    // Prompty's Jinja2 renderer is Python's: a boolean is written `True` or `False`.
    let python = renders_in_python(&front);
    // A file llmtool wrote from a tool: its inputs are the tool's, required by its author.
    let exported = front.get("metadata").and_then(|m| m.get("llmtool")).is_some();
    let written = Written { python, exported };
    let mut inputs = match front.get("inputs") {
        Some(Value::String(value)) if file_reference(value).is_some() => {
            let place = value_span(front_text, &["inputs"], value);
            let referenced = referenced_file(value, files, place)?;
            // The inputs are not written in this file: their warnings are placed at the reference.
            read_inputs(&referenced, &filtered, &|_| place, written, &mut diagnostics)?
        }
        Some(inputs) => {
            let place = |name: &str| input_span(front_text, name);
            read_inputs(inputs, &filtered, &place, written, &mut diagnostics)?
        }
        None => Inputs { variables: Vec::new(), left_out: Vec::new() },
    };
    let parts = without_inputs(parts, &inputs.left_out);
    let extras = front.get("metadata").and_then(|m| m.get("llmtool"));
    // Every value the template uses is declared; a file llmtool wrote keeps the tool's own
    // variables in its `llmtool` block, which `finish` puts over these.
    declare_used(&parts, &mut inputs.variables, Some(&filtered), (text, body_at), &mut diagnostics);
    let builder =
        ToolBuilder::new(&parts, metadata, inputs.variables, Some((text, body_at)))?.chat(is_chat);
    Ok(Converted { value: builder.finish(extras), diagnostics })
}

/// `parts` without the placeholders of the inputs `left_out`, and without the Markdown image
/// around one (`![alt]({{photo}})`, how Prompty 1 places a picture in a message). A
/// placeholder that was a line of its own goes with its line.
pub(super) fn without_inputs(parts: Vec<syntax::Part>, left_out: &[String]) -> Vec<syntax::Part> {
    let mut kept: Vec<syntax::Part> = Vec::with_capacity(parts.len());
    // After a placeholder is taken out: whether a Markdown image was open around it.
    let mut taken: Option<bool> = None;
    for part in parts {
        match part {
            syntax::Part::Variable { ref name, .. } if left_out.contains(name) => {
                let image = match kept.last_mut() {
                    Some(syntax::Part::Literal(before)) => {
                        markdown_image_start(before).map(|at| before.truncate(at)).is_some()
                    }
                    _ => false,
                };
                taken = Some(image || taken == Some(true));
            }
            syntax::Part::Literal(text) => {
                let Some(image) = taken.take() else {
                    kept.push(syntax::Part::Literal(text));
                    continue;
                };
                let text = if image { text.strip_prefix(')').unwrap_or(&text) } else { &text };
                match kept.last_mut() {
                    Some(syntax::Part::Literal(before)) => {
                        // The newlines on both sides of the gap are one line break, not two.
                        let ending = before.len() - before.trim_end_matches('\n').len();
                        let starting = text.len() - text.trim_start_matches('\n').len();
                        before.push_str(&text[ending.min(starting)..]);
                    }
                    // At the start of the prompt, nothing is left to end a line.
                    None => {
                        let text = text.trim_start_matches('\n');
                        if !text.is_empty() {
                            kept.push(syntax::Part::Literal(text.into()));
                        }
                    }
                    Some(_) => kept.push(syntax::Part::Literal(text.to_owned())),
                }
            }
            part @ syntax::Part::Variable { .. } => {
                taken = None;
                kept.push(part);
            }
        }
    }
    kept
}

/// Where the Markdown image that `text` ends in the middle of begins (`![alt](`, the value
/// to come next), if it does.
fn markdown_image_start(text: &str) -> Option<usize> {
    let open = text.strip_suffix("](")?;
    let at = open.rfind("![")?;
    (!open[at..].contains(['\n', ']'])).then_some(at)
}

/// The body as the messages it holds, and whether it is a chat: a body of one `user:` line
/// and its text is that text, one user message. Otherwise each role line (Prompty's: any case,
/// a `#` before, attributes after) is written as a tool's (`system:`), each message's text
/// without the newlines around it (Prompty trims them), and text before the first role line
/// is a system message, as Prompty sends it.
fn message_text(
    body: &str,
    body_at: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<(Option<&'static str>, String, bool), Box<Diagnostic>> {
    let roles = body.lines().filter(|line| is_role_line(line)).count();
    let first = body.lines().find(|line| !line.trim().is_empty()).unwrap_or("");
    if roles == 1 && is_role_line(first) && role_name(first) == "user" {
        let after = &body[body.find(first).map_or(0, |at| at + first.len())..];
        return Ok((None, after.trim_matches('\n').to_owned(), false));
    }
    if body.trim().is_empty() {
        return Ok((None, String::new(), false));
    }
    let mut messages: Vec<(&'static str, String)> = Vec::new();
    let mut before = String::new();
    let mut at = body_at;
    for line in body.split_inclusive('\n') {
        let line_at = at;
        at += line.len();
        if !is_role_line(line) {
            match messages.last_mut() {
                Some((_, text)) => text.push_str(line),
                None => before.push_str(line),
            }
            continue;
        }
        let name = role_name(line);
        if name.contains('[') {
            let start = line_at + (line.len() - line.trim_start().len());
            diagnostics.push(
                Diagnostic::new(
                    &PEER_RENDERS_DIFFERENTLY,
                    format!(
                        "Prompty sends the attributes of the role line `{}` with its message (a `name`, say); a tool's turn has none, so they are left out",
                        line.trim()
                    ),
                )
                .at(llmtool_format::span::Span::new(start, start + line.trim().len())),
            );
        }
        let role = match name.split('[').next().unwrap_or_default().trim() {
            "system" => "system",
            "developer" => "developer",
            "assistant" => "assistant",
            "function" | "tool" => {
                let start = line_at + (line.len() - line.trim_start().len());
                let problem = Diagnostic::new(
                    &INVALID_SOURCE,
                    format!(
                        "Prompty sends `{}` as a tool message, the answer to a function call the model made; a tool's prompt makes no call, and the APIs refuse a tool message that answers none",
                        line.trim()
                    ),
                )
                .at(llmtool_format::span::Span::new(start, start + line.trim().len()))
                .with_help("write the example's result in a `user:` or `assistant:` message");
                return Err(Box::new(problem));
            }
            _ => "user",
        };
        messages.push((role, String::new()));
    }
    if !before.trim().is_empty() {
        diagnostics.push(Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            "Prompty sends the text before any role line as a system message, so the tool's chat starts with the role line `system:`",
        ));
    }
    // The role line the import adds before the text Prompty sends as a system message is not
    // the template's own: it goes in once the template is read, where its whitespace control
    // (a leading `{{-`) cannot reach it.
    let leading = !before.trim().is_empty();
    let mut text = String::new();
    if leading {
        text.push_str(before.trim_matches('\n'));
    }
    for (index, (role, content)) in messages.iter().enumerate() {
        text.push_str(&llmtool_format::chat::role_line(index + usize::from(leading), role));
        text.push_str(content.trim_matches('\n'));
    }
    Ok((leading.then_some("system:\n"), text, true))
}

/// The role a Prompty role line names, in lower case, with its attributes (`user[name="A"]`).
fn role_name(line: &str) -> String {
    let line = line.trim();
    let line = line.strip_prefix('#').unwrap_or(line).trim_start();
    line.strip_suffix(':').unwrap_or(line).trim().to_ascii_lowercase()
}

fn parameters(options: &Map<String, Value>) -> Map<String, Value> {
    let mut parameters = Map::new();
    for (key, value) in options {
        match OPTIONS.iter().find(|(_, theirs)| theirs == key) {
            Some((ours, _)) => {
                parameters.insert((*ours).into(), value.clone());
            }
            None if key == "stopSequences" => {
                parameters.insert("stop".into(), value.clone());
            }
            None if key == "additionalProperties" => {
                for (key, value) in value.as_object().into_iter().flatten() {
                    parameters.insert(key.clone(), value.clone());
                }
            }
            None => {
                parameters.insert(key.clone(), value.clone());
            }
        }
    }
    parameters
}

/// The variables of Prompty's inputs, and the names of the inputs left out of the tool.
struct Inputs {
    variables: Vec<Value>,
    /// Inputs that cannot be text: a `thread` (whose place Prompty fills with the conversation
    /// so far), an `image`, a `file` or an `audio` clip. Their places in the prompt go too.
    left_out: Vec<String>,
}

/// Prompty inputs (a mapping by name, or a list with `name`) as variables, with the defaults
/// the template's filters give (`filtered`) where the input has none; `place` says where an
/// input is written, for the diagnostics. A `thread` input is the conversation so far, which a tool does
/// not have, and an `image`, `file` or `audio` input is not text: each is left out with a
/// warning at its declaration, and the rest of the file is read.
fn read_inputs(
    inputs: &Value,
    filtered: &Map<String, Value>,
    place: &dyn Fn(&str) -> Option<llmtool_format::span::Span>,
    written: Written,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Inputs, Box<Diagnostic>> {
    let Written { python, exported } = written;
    // A boolean default or allowed value as the template's renderer writes it.
    let written = |value: Value| match value {
        Value::Bool(yes) if python => Value::String(if yes { "True" } else { "False" }.into()),
        other => other,
    };
    let entries: Vec<(String, Value)> = match inputs {
        Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Value::Array(list) => list
            .iter()
            .map(|v| (v["name"].as_str().unwrap_or_default().to_owned(), v.clone()))
            .collect(),
        _ => return Err(invalid("`inputs` is neither a mapping nor a list")),
    };
    let mut found = Inputs { variables: Vec::new(), left_out: Vec::new() };
    // The inputs with no default, which Prompty renders as nothing when they are not given.
    let mut asked = Vec::new();
    for (name, input) in entries {
        // A scalar is Prompty's short form: an example value of its type.
        let input = if input.is_object() { input } else { json!({ "kind": "string" }) };
        // Prompty 2 says `kind`; Prompty 1 said `type`, and `list` for an array.
        let kind = input["kind"].as_str().or_else(|| input["type"].as_str()).unwrap_or("string");
        let kind = if kind == "list" { "array" } else { kind };
        let why = match kind {
            "thread" => Some(format!(
                "input `{name}` is a `thread`: Prompty puts the conversation so far in its place, and a tool has none, so it is left out of the prompt"
            )),
            "image" | "file" | "audio" => Some(format!(
                "input `{name}` is an `{kind}`, which Prompty sends as such, and a tool's variables hold text: it is left out, with its place in the prompt"
            )),
            _ => None,
        };
        if let Some(why) = why {
            let mut left_out = Diagnostic::new(&DROPPED_FIELD, why);
            if let Some(place) = place(&name) {
                left_out = left_out.at(place);
            }
            diagnostics.push(left_out);
            found.left_out.push(name);
            continue;
        }
        let enum_values = |value: &Value| value["enumValues"].as_array().cloned();
        let (kind, allowed) = match kind {
            "array" => match enum_values(&input["items"]) {
                Some(values) => (VariableKind::MultiSelect, Some(values)),
                None => {
                    diagnostics.push(Diagnostic::new(
                        &UNSUPPORTED_PARAMETER,
                        format!("input `{name}` is an array with no allowed values: read as text"),
                    ));
                    (VariableKind::Text, None)
                }
            },
            // A boolean is one of its two values, as the renderer writes them (see `written`);
            // a value given as JSON `true` takes that spelling at run time.
            "boolean" => {
                let values = enum_values(&input).unwrap_or_else(|| vec![json!(true), json!(false)]);
                (VariableKind::SingleSelect, Some(values))
            }
            other => {
                if other != "string" {
                    diagnostics.push(Diagnostic::new(
                        &UNSUPPORTED_PARAMETER,
                        format!("input `{name}` is of kind `{other}`: read as text"),
                    ));
                }
                match enum_values(&input) {
                    Some(values) => (VariableKind::SingleSelect, Some(values)),
                    None => (VariableKind::Text, None),
                }
            }
        };
        // Optional only when the file says so (`required: false`): an input with no default
        // is asked for, never quietly rendered as nothing.
        let required = input["required"].as_bool().unwrap_or(true);
        // The input's own default, else the one the template gives it (which Jinja renders
        // when no value is given), else none.
        let default = match input.get("default") {
            Some(default) if !default.is_null() => Some(default.clone()),
            _ => filtered.get(&name).cloned().or_else(|| empty_default(kind, required)),
        };
        if default.is_none() {
            asked.push(name.clone());
        }
        let allowed = allowed.map(|values| values.into_iter().map(written).collect());
        found.variables.push(variable_json(
            &name,
            kind,
            input["description"].as_str(),
            allowed,
            default.map(written),
        ));
    }
    if let Some(first) = asked.first().filter(|_| !exported) {
        let names = asked.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
        let mut said = Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            format!(
                "Prompty renders an input it is not given as nothing, where `llmtool render` and `run` ask for an input declared without a default: {names}"
            ),
        )
        .with_help("give an input `default: \"\"` (or `required: false`) to render nothing when it is not given, as Prompty does");
        if let Some(place) = place(first) {
            said = said.at(place);
        }
        diagnostics.push(said);
    }
    Ok(found)
}

/// How a file's inputs were written: whether its renderer is Python's (Jinja2, which writes
/// a boolean `True`), and whether llmtool wrote the file from a tool.
#[derive(Debug, Clone, Copy)]
struct Written {
    python: bool,
    exported: bool,
}

/// The name in a whole-value reference to a file, `${file:NAME}`, as Prompty writes them.
fn file_reference(value: &str) -> Option<&str> {
    let inner = value.strip_prefix("${")?.strip_suffix('}')?;
    let (protocol, name) = inner.split_once(':')?;
    protocol.eq_ignore_ascii_case("file").then_some(name)
}

/// The value of the file a `${file:NAME}` reference names, read as Prompty reads it: JSON for
/// `.json`, YAML for `.yaml` and `.yml`, else text. A file that cannot be had, or read, is an
/// error at the reference (`place`).
fn referenced_file(
    reference: &str,
    files: &dyn SiblingFiles,
    place: Option<llmtool_format::span::Span>,
) -> Result<Value, Box<Diagnostic>> {
    let name = file_reference(reference).unwrap_or_default();
    let at = |message: String| {
        let problem = Diagnostic::new(&INVALID_SOURCE, message);
        Box::new(match place {
            Some(place) => problem.at_labelled(place, "the file named here"),
            None => problem,
        })
    };
    if let Some(why) = sibling_files::outside_folder(name) {
        return Err(at(format!("{reference}: {why}")));
    }
    let text = files.read(name).map_err(|why| at(format!("{reference}: {why}")))?;
    let extension = name.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase());
    match extension.as_deref() {
        Some("json") => serde_json::from_str(&text)
            .map_err(|error| at(format!("{reference}: `{name}` is not JSON: {error}"))),
        Some("yaml" | "yml") => super::yaml_read::from_str(&text)
            .map_err(|error| at(format!("{reference}: `{name}` is not YAML: {error}"))),
        _ => Ok(Value::String(text)),
    }
}

/// Where the scalar `value` of the key at `path` is written in the front matter `front`.
fn value_span(front: &str, path: &[&str], value: &str) -> Option<llmtool_format::span::Span> {
    let key = front_matter::key_span(front, path)?;
    let line_end = front[key.end..].find('\n').map_or(front.len(), |end| key.end + end);
    let at = key.end + front[key.end..line_end].find(value)?;
    Some(llmtool_format::span::Span::new(at, at + value.len()))
}

/// Where the input `name` is written in the front matter `front`: its key (`inputs:` as a
/// mapping), or its `name:` line (a list).
fn input_span(front: &str, name: &str) -> Option<llmtool_format::span::Span> {
    if let Some(span) = front_matter::key_span(front, &["inputs", name]) {
        return Some(span);
    }
    let inputs = front_matter::key_span(front, &["inputs"])?;
    front[inputs.end..]
        .lines()
        .scan(inputs.end, |at, line| {
            let start = *at;
            *at += line.len() + 1;
            Some((start, line))
        })
        .find_map(|(start, line)| {
            let content = line.trim_start().strip_prefix("- ").unwrap_or(line.trim_start());
            let value = content.strip_prefix("name:")?.trim().trim_matches(['"', '\'']);
            (value == name).then(|| {
                let at = start + line.find(name)?;
                Some(llmtool_format::span::Span::new(at, at + name.len()))
            })?
        })
}
