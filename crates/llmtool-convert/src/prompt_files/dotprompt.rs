//! Google Dotprompt (`.prompt`): YAML front matter with `model`, `config`, `input.schema` (JSON
//! Schema or Picoschema) and `input.default`, then the prompt as a Handlebars body.

use serde_json::{Map, Value, json};

use super::syntax::{self, Slots, handlebars};
use super::{
    ToolBuilder, ToolSource, declare_used, default_json, empty_default, front_matter, invalid,
    single_model, template_problem, variable_json,
};
use crate::codes::{DROPPED_FIELD, PEER_RENDERS_DIFFERENTLY, UNSUPPORTED_PARAMETER};
use crate::function::Converted;
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::model::VariableKind;
use llmtool_format::span::Span;

/// Tool parameters and the Dotprompt `config` keys they are. Genkit's `candidates` is how
/// many answers (or pictures, for an image model such as Imagen) to make: our `n`.
const CONFIG: [(&str, &str); 5] = [
    ("temperature", "temperature"),
    ("max_tokens", "maxOutputTokens"),
    ("top_p", "topP"),
    ("top_k", "topK"),
    ("n", "candidates"),
];

pub(super) fn write(source: &ToolSource) -> Converted<String> {
    let mut diagnostics = Vec::new();
    let (names, renamed) = source.template_names(handlebars::is_name, &mut diagnostics);
    let mut front = Map::new();
    if let Some(name) = source.metadata_text("prompt_name") {
        front.insert("name".into(), json!(name));
    }
    if let Some(description) = source.metadata_text("description") {
        front.insert("description".into(), json!(description));
    }
    if let Some(version) = source.json.get("version").filter(|v| v.is_string()) {
        front.insert("version".into(), version.clone());
    }
    let mut mapped = vec!["prompt_name", "description", "parameters"];
    if let Some(model) = single_model(source.metadata().get("model_version")) {
        front.insert("model".into(), json!(model));
        mapped.push("model_version");
    }
    if let Some(Value::Object(parameters)) = source.metadata().get("parameters") {
        front.insert("config".into(), Value::Object(config(parameters, true)));
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut defaults = Map::new();
    for (variable, name) in source.variables().iter().zip(&names) {
        properties.insert(name.clone(), schema(variable));
        match default_json(variable) {
            Some(default) => {
                defaults.insert(name.clone(), default);
            }
            None => required.push(json!(name)),
        }
    }
    if !properties.is_empty() {
        let mut input = Map::new();
        input.insert(
            "schema".into(),
            json!({ "type": "object", "properties": properties, "required": required }),
        );
        if !defaults.is_empty() {
            input.insert("default".into(), Value::Object(defaults));
        }
        front.insert("input".into(), Value::Object(input));
    }
    let json_output = source.metadata().get("expected_output").and_then(|o| o["format"].as_str());
    if json_output.is_some_and(|f| f.eq_ignore_ascii_case("json")) {
        front.insert("output".into(), json!({ "format": "json" }));
    }
    // The functions the prompt offers, by the names a model calls them by: Genkit's `tools`
    // (the entries themselves go with the rest of what Dotprompt has no place for).
    let tools = offered_names(source.metadata().get("functions"));
    if !tools.is_empty() {
        front.insert("tools".into(), json!(tools));
    }
    let mut extras = source.extras(&mapped, renamed);
    let prompt = source.json.get("model_prompt").and_then(Value::as_str).unwrap_or("");
    if prompt.trim() != prompt {
        diagnostics.push(Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            "Dotprompt trims the whitespace around the template, and this prompt starts or ends with some; the exact prompt is kept for import",
        ));
        extras.insert("model_prompt".into(), json!(prompt));
    }
    if !extras.is_empty() {
        front.insert("metadata".into(), json!({ "llmtool": extras }));
    }
    let slots = Slots { names: &names, kinds: source.variables().iter().map(|v| v.kind).collect() };
    let mut body = handlebars::write(source.pieces(), &slots);
    if source.template.is_chat() {
        body = role_markers(&body);
    }
    Converted { value: front_matter::join(&front, &body), diagnostics }
}

/// The names a model calls the functions of `metadata.functions` by: a built-in's own (with
/// `database_schema` beside `query_database`), a library tool's slug as a function name, an
/// MCP function's; each once.
fn offered_names(functions: Option<&Value>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |name: String| {
        if !names.contains(&name) {
            names.push(name);
        }
    };
    for entry in functions.and_then(Value::as_array).into_iter().flatten() {
        let text = |key: &str| entry.get(key).and_then(Value::as_str);
        if let Some(builtin) = text("builtin") {
            add(builtin.to_owned());
            if builtin == "query_database" {
                add("database_schema".to_owned());
            }
        } else if let Some(reference) = text("tool") {
            let slug = reference.strip_prefix("registry:").unwrap_or(reference);
            let slug = slug.split(['@', ':']).next().unwrap_or(slug);
            add(llmtool_format::naming::slug(slug, llmtool_format::naming::MAX_NAME));
        } else if let Some(name) = text("name") {
            add(name.to_owned());
        }
    }
    names
}

/// A warning at the first bare use (`{{tags}}`, not an `{{#each}}` block) of each list input:
/// Handlebars writes a list placed that way with commas and no spaces (`a,b`), where a tool
/// joins a multi-select's items with `, `.
fn say_bare_lists(
    parts: &[syntax::Part],
    variables: &[Value],
    (text, from): (&str, usize),
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut said: Vec<&str> = Vec::new();
    for part in parts {
        let syntax::Part::Variable { name, list: false, .. } = part else { continue };
        let is_list = variables.iter().any(|v| {
            v["name"].as_str() == Some(name) && v["type"].as_str() == Some("multi-select")
        });
        if !is_list || said.contains(&name.as_str()) {
            continue;
        }
        said.push(name);
        let problem = Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            format!(
                "Dotprompt writes the list `{name}` placed as `{{{{{name}}}}}` with commas and no spaces (`a,b`), and the tool joins its items with `, `; write `{{{{#each {name}}}}}{{{{#unless @first}}}}, {{{{/unless}}}}{{{{this}}}}{{{{/each}}}}` in the source for both to agree"
            ),
        );
        diagnostics.push(match text.get(from..).and_then(|body| super::first_use(body, name)) {
            Some(at) => {
                problem.at(llmtool_format::span::Span::new(from + at, from + at + name.len()))
            }
            None => problem,
        });
    }
}

/// A chat's body without the turns that hold nothing but whitespace: Dotprompt sends no
/// empty message (a `{{history}}` at the end, given no conversation, leaves none), where a
/// tool's empty turn would be sent empty.
fn without_empty_turns(body: String) -> String {
    let turns = llmtool_format::chat::written(&body);
    if turns.iter().all(|turn| !turn.text.trim().is_empty()) {
        return body;
    }
    let mut kept = String::with_capacity(body.len());
    for (index, turn) in turns.iter().enumerate() {
        if turn.text.trim().is_empty() {
            continue;
        }
        let end = turns.get(index + 1).map_or(body.len(), |next| next.role_line.start);
        kept.push_str(&body[turn.role_line.start..end]);
    }
    kept
}

/// A chat's body with each role line written as Dotprompt's role marker (`{{role "system"}}`;
/// `assistant:` is Dotprompt's `model`), and a line escaped because it reads as a role line
/// written as it is (Dotprompt reads it as text).
fn role_markers(body: &str) -> String {
    body.split_inclusive('\n')
        .map(|line| match llmtool_format::chat::line_role(line) {
            Some(role) => {
                let line_end = &line[role.len() + 1..];
                let role = if role == "assistant" { "model" } else { role };
                format!("{{{{role \"{role}\"}}}}{line_end}")
            }
            None => llmtool_format::chat::unescaped(line).to_owned(),
        })
        .collect()
}

/// Tool parameters as `config` keys (`towards_dotprompt`), or back.
fn config(parameters: &Map<String, Value>, towards_dotprompt: bool) -> Map<String, Value> {
    let pairs = CONFIG.iter().copied().chain([("stop", "stopSequences")]);
    let pairs: Vec<(&str, &str)> =
        if towards_dotprompt { pairs.collect() } else { pairs.map(|(a, b)| (b, a)).collect() };
    parameters
        .iter()
        .map(|(key, value)| {
            let key = pairs.iter().find(|(from, _)| from == key).map_or(key.as_str(), |(_, to)| to);
            (key.to_owned(), value.clone())
        })
        .collect()
}

fn schema(variable: &llmtool_format::template::VariableSpec) -> Value {
    let mut schema = match variable.kind {
        VariableKind::Text => json!({ "type": "string" }),
        VariableKind::SingleSelect => json!({ "type": "string", "enum": variable.allowed_values }),
        VariableKind::MultiSelect => json!({
            "type": "array",
            "items": { "type": "string", "enum": variable.allowed_values },
            "uniqueItems": true,
        }),
    };
    if let Some(description) = &variable.description {
        schema["description"] = json!(description);
    }
    schema
}

/// The body with each role marker (`{{role "system"}}`, or the block `{{#role "system"}}` ...
/// `{{/role}}`) written as a chat's role line (`system:`; Dotprompt's `model` is `assistant:`),
/// and whether it is a chat. A lone `user` role at the start marks nothing and is dropped.
/// `{{history}}` becomes the role line `assistant:`. `body_at` is where the body starts in the
/// file, for the places of warnings.
fn roles_as_text<'a>(
    body: &'a str,
    body_at: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> (std::borrow::Cow<'a, str>, bool) {
    let mut out = String::with_capacity(body.len());
    // The text of the turn being read: a line of it that reads as a role line is escaped
    // when the turn is written out, since Dotprompt reads it as text.
    let mut turn = String::new();
    let flush = |out: &mut String, turn: &mut String| {
        out.push_str(&llmtool_format::chat::escape(turn));
        turn.clear();
    };
    let mut roles = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find("{{") {
        let Some(length) = rest[at..].find("}}") else { break };
        let inner = rest[at + 2..at + length].trim_matches(|c: char| c.is_whitespace() || c == '~');
        let role =
            inner.strip_prefix('#').unwrap_or(inner).strip_prefix("role").map(str::trim).and_then(
                |name| name.strip_prefix(['"', '\'']).and_then(|n| n.strip_suffix(['"', '\''])),
            );
        turn.push_str(&rest[..at]);
        let marker_at = body_at + body.len() - rest.len() + at;
        let marker = Span::new(marker_at, marker_at + length + 2);
        rest = &rest[at + length + 2..];
        match role {
            Some(role) => {
                flush(&mut out, &mut turn);
                out.push_str(if role == "model" { "assistant" } else { role });
                out.push(':');
                if !rest.starts_with(['\n', '\r']) {
                    out.push('\n');
                }
                roles.push(role.to_owned());
            }
            // The conversation so far, which a tool does not have; Dotprompt sends what
            // follows it as a `model` message.
            None if inner == "history" => {
                flush(&mut out, &mut turn);
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("assistant:");
                if !rest.starts_with(['\n', '\r']) {
                    out.push('\n');
                }
                roles.push("model".to_owned());
                diagnostics.push(Diagnostic::new(
                    &DROPPED_FIELD,
                    "`{{history}}` puts the conversation so far in the prompt, and a tool has none: it is left out, and the role line `assistant:` takes its place, as Dotprompt sends what follows it as a `model` message",
                ).at(marker));
            }
            // The end of a role block.
            None if inner == "/role" => {
                let ends_a_line =
                    if turn.is_empty() { out.ends_with('\n') } else { turn.ends_with('\n') };
                if !ends_a_line {
                    turn.push('\n');
                }
                rest = rest.strip_prefix('\n').unwrap_or(rest);
            }
            None => {
                turn.push_str(&body[body.len() - rest.len() - length - 2..body.len() - rest.len()])
            }
        }
    }
    if roles.is_empty() {
        return (std::borrow::Cow::Borrowed(body), false);
    }
    turn.push_str(rest);
    flush(&mut out, &mut turn);
    if roles == ["user"] && out.trim_start().starts_with("user:") {
        // One user message is the prompt itself, not a chat: its lines as they are.
        let after = out.trim_start().strip_prefix("user:").unwrap_or_default();
        let after = after.trim_start_matches(['\r', '\n']);
        let text = after.split_inclusive('\n').map(llmtool_format::chat::unescaped).collect();
        return (std::borrow::Cow::Owned(text), false);
    }
    (std::borrow::Cow::Owned(without_empty_turns(out)), true)
}

/// Picoschema's scalar types: an `input.schema` that is one of them is one value; any other
/// name refers to a schema registered elsewhere.
const PICOSCHEMA_TYPES: [&str; 7] =
    ["string", "number", "integer", "boolean", "null", "any", "object"];

/// The front-matter keys the reader maps (the others are left out with a warning).
const DOTPROMPT_MAPPED: [&str; 7] =
    ["name", "description", "model", "config", "input", "output", "metadata"];

/// `text` after the comment (`#`) and blank lines that Dotprompt allows before the front
/// matter, when front matter follows them; else `text`.
fn skip_preamble(text: &str) -> &str {
    let mut rest = text.strip_prefix('\u{feff}').unwrap_or(text);
    loop {
        if rest.starts_with("---") {
            return rest;
        }
        let Some((line, after)) = rest.split_once('\n') else { return text };
        if !(line.trim().is_empty() || line.starts_with('#')) {
            return text;
        }
        rest = after;
    }
}

pub(super) fn read(text: &str) -> Result<Converted<Value>, Box<Diagnostic>> {
    let mut diagnostics = Vec::new();
    // As Dotprompt reads a file: comment and blank lines may come before the front matter,
    // and with front matter, the template is the body without the whitespace around it.
    let from_front = skip_preamble(text);
    let preamble = from_front.as_ptr() as usize - text.as_ptr() as usize;
    let split = front_matter::split(from_front).map_err(|d| Box::new(d.shifted(preamble)))?;
    let (front, body) = match split {
        (front, _) if front.is_empty() && !from_front.starts_with("---") => (front, text),
        (front, body) => (front, body.trim()),
    };
    // Where the body starts in the file (it is a part of `text`), to find what it quotes.
    let body_at = body.as_ptr() as usize - text.as_ptr() as usize;
    let (body, is_chat) = roles_as_text(body, body_at, &mut diagnostics);
    let parts =
        handlebars::read(&body).map_err(|e| template_problem(text, body_at, "the template", e))?;
    let mut metadata = Map::new();
    for (theirs, ours) in
        [("name", "prompt_name"), ("description", "description"), ("model", "model_version")]
    {
        if let Some(value) = front.get(theirs).filter(|v| v.is_string()) {
            metadata.insert(ours.into(), value.clone());
        }
    }
    if let Some(Value::Object(settings)) = front.get("config") {
        metadata.insert("parameters".into(), Value::Object(config(settings, false)));
    }
    let input = front.get("input");
    let defaults = input.and_then(|i| i.get("default")).and_then(Value::as_object);
    let front_text = &text[..body_at.min(text.len())];
    let mut variables = match input.and_then(|i| i.get("schema")) {
        Some(schema @ Value::Object(_)) => read_schema(schema, defaults, &mut diagnostics)?,
        // A scalar schema (`schema: string`): the input is one value, not named ones, which
        // the template can only reach as `{{this}}`.
        Some(Value::Null) | None => Vec::new(),
        Some(schema) => {
            let said = match schema.as_str() {
                Some(name) if !PICOSCHEMA_TYPES.contains(&name) => format!(
                    "`input.schema` names the schema `{name}`, which is defined outside this file: the variables are those the template uses"
                ),
                _ => format!(
                    "`input.schema` is {schema}, one value rather than named ones: a tool's values are named, so it is left out"
                ),
            };
            let mut located = 0;
            diagnostics.push(front_matter::dropped_key(
                front_text,
                &["input", "schema"],
                said,
                &mut located,
            ));
            Vec::new()
        }
    };
    let extras = front.get("metadata").and_then(|m| m.get("llmtool"));
    // Every value the template uses is declared; a file llmtool wrote keeps the tool's own
    // variables in its `llmtool` block, which `finish` puts over these.
    declare_used(&parts, &mut variables, defaults, (text, body_at), &mut diagnostics);
    say_bare_lists(&parts, &variables, (text, body_at), &mut diagnostics);
    let mut located = 0;
    let mut dropped = |path: &[&str], what: String| {
        diagnostics.push(front_matter::dropped_key(front_text, path, what, &mut located));
    };
    if let Some(output) = front.get("output").and_then(Value::as_object) {
        let format = output.get("format").and_then(Value::as_str);
        if format.is_some_and(|f| f.eq_ignore_ascii_case("json")) || output.contains_key("schema") {
            metadata.insert("expected_output".into(), json!({ "format": "JSON" }));
        }
        if output.contains_key("schema") {
            dropped(&["output", "schema"], "the output schema is not carried: the tool expects a JSON answer, without its shape".into());
        }
        for key in output.keys().filter(|k| !["format", "schema"].contains(&k.as_str())) {
            dropped(
                &["output", key],
                format!("`output.{key}` has no place in a tool file: left out"),
            );
        }
    }
    for key in front.keys().filter(|k| !DOTPROMPT_MAPPED.contains(&k.as_str())) {
        if key == "version" && extras.is_some() {
            continue;
        }
        // An export's own `tools` name the functions its kept entries offer.
        let kept_functions = extras.as_ref().is_some_and(|kept| {
            kept.get("functions").or_else(|| kept.get("metadata")?.get("functions")).is_some()
        });
        if key == "tools" && kept_functions {
            continue;
        }
        let why = match key.as_str() {
            "tools" => {
                "Genkit's tools are registered in its code, not in a tool file: name what the prompt may call in `metadata.functions` (a built-in, a library tool or an MCP server's function)"
            }
            _ => "no place in a tool file",
        };
        dropped(&[key], format!("`{key}` is left out: {why}"));
    }
    let builder =
        ToolBuilder::new(&parts, metadata, variables, Some((text, body_at)))?.chat(is_chat);
    Ok(Converted { value: builder.finish(extras), diagnostics })
}

/// The input schema's properties as variables: JSON Schema, or Picoschema's short forms
/// (`name: string, description`, `name?: string`, `name(enum, description): [a, b]`,
/// `name(array, description): string`).
fn read_schema(
    schema: &Value,
    defaults: Option<&Map<String, Value>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Vec<Value>, Box<Diagnostic>> {
    let Value::Object(object) = schema else {
        return Err(invalid("`input.schema` is not a mapping"));
    };
    let json_schema =
        object.contains_key("properties") || object.get("type") == Some(&json!("object"));
    let mut variables = Vec::new();
    if json_schema {
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, property) in
            object.get("properties").and_then(Value::as_object).into_iter().flatten()
        {
            let (kind, allowed) = json_kind(name, property, diagnostics);
            let default = default_for(name, kind, defaults, required.contains(&name.as_str()));
            variables.push(variable_json(
                name,
                kind,
                property["description"].as_str(),
                allowed,
                default,
            ));
        }
        return Ok(variables);
    }
    for (key, value) in object {
        let (head, modifiers) = match key.split_once('(') {
            Some((head, rest)) => (head, rest.trim_end_matches(')')),
            None => (key.as_str(), ""),
        };
        let optional = head.ends_with('?');
        let name = head.trim_end_matches('?').trim();
        let mut modifier_parts = modifiers.splitn(2, ',').map(str::trim);
        let shape = modifier_parts.next().unwrap_or("");
        let mut description = modifier_parts.next().map(str::to_owned);
        let (kind, allowed) = match (shape, value) {
            ("enum", Value::Array(values)) => (VariableKind::SingleSelect, Some(values.clone())),
            ("array", _) => {
                diagnostics.push(Diagnostic::new(
                    &UNSUPPORTED_PARAMETER,
                    format!("input `{name}` is an array with no allowed values: read as text"),
                ));
                (VariableKind::Text, None)
            }
            (_, Value::String(text)) => {
                let (kind, rest) = text
                    .split_once(',')
                    .map_or((text.as_str(), None), |(k, d)| (k, Some(d.trim())));
                if kind.trim() != "string" {
                    diagnostics.push(Diagnostic::new(
                        &UNSUPPORTED_PARAMETER,
                        format!("input `{name}` is `{}`: read as text", kind.trim()),
                    ));
                }
                if description.is_none() {
                    description = rest.map(str::to_owned);
                }
                (VariableKind::Text, None)
            }
            _ => {
                return Err(invalid(format!(
                    "input `{name}`: this Picoschema form is not read here"
                )));
            }
        };
        let default = default_for(name, kind, defaults, !optional);
        variables.push(variable_json(name, kind, description.as_deref(), allowed, default));
    }
    Ok(variables)
}

fn json_kind(
    name: &str,
    property: &Value,
    diagnostics: &mut Vec<Diagnostic>,
) -> (VariableKind, Option<Vec<Value>>) {
    let kind = property["type"].as_str().unwrap_or("string");
    match (kind, property.get("enum"), property["items"].get("enum")) {
        ("string", Some(Value::Array(values)), _) => {
            (VariableKind::SingleSelect, Some(values.clone()))
        }
        ("array", _, Some(Value::Array(values))) => {
            (VariableKind::MultiSelect, Some(values.clone()))
        }
        ("string", None, _) => (VariableKind::Text, None),
        (other, _, _) => {
            diagnostics.push(Diagnostic::new(
                &UNSUPPORTED_PARAMETER,
                format!("input `{name}` is `{other}`: read as text"),
            ));
            (VariableKind::Text, None)
        }
    }
}

/// The default: `input.default`'s, else none for a required input, else an empty value.
fn default_for(
    name: &str,
    kind: VariableKind,
    defaults: Option<&Map<String, Value>>,
    required: bool,
) -> Option<Value> {
    match defaults.and_then(|d| d.get(name)) {
        Some(default) => Some(default.clone()),
        None => empty_default(kind, required),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(body: &str) -> (String, usize) {
        let mut diagnostics = Vec::new();
        let (text, chat) = roles_as_text(body, 0, &mut diagnostics);
        (text.into_owned(), usize::from(chat) + diagnostics.len())
    }

    #[test]
    fn a_tools_functions_are_genkits_tools_by_the_names_a_model_calls() {
        let functions = json!([
            { "builtin": "query_database", "database": "shop" },
            { "builtin": "query_database", "database": "crm" },
            { "tool": "registry:summarize-text@2" },
            { "mcp": "files", "name": "read_file" }
        ]);
        assert_eq!(
            offered_names(Some(&functions)),
            ["query_database", "database_schema", "summarize_text", "read_file"]
        );
        assert!(offered_names(None).is_empty());
    }

    #[test]
    fn role_markers_become_a_chats_role_lines() {
        let (text, warnings) =
            roles("{{role \"system\"}}\nBe brief.\n{{ role 'user' }}\nHi {{name}}\n");
        assert_eq!(text, "system:\nBe brief.\nuser:\nHi {{name}}\n");
        assert_eq!(warnings, 1);
        let (text, _) = roles("{{#role \"system\"}}Be brief.{{/role}}\nHi");
        assert_eq!(text, "system:\nBe brief.\nHi");
        // A lone user role at the start marks nothing.
        assert_eq!(roles("{{role \"user\"}}\nHi {{name}}"), ("Hi {{name}}".to_owned(), 0));
        assert_eq!(roles("No roles {{name}}"), ("No roles {{name}}".to_owned(), 0));
        // Dotprompt sends no empty message, and the chat keeps no empty turn.
        let (text, _) = roles("{{role \"system\"}}\nBe brief.\n{{role \"user\"}}\n{{history}}");
        assert_eq!(text, "system:\nBe brief.\n");
    }
}
