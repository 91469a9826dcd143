//! Files that hold several tools: a JSON list of them, an MCP `tools/list` or `prompts/list`
//! result (bare, or in its JSON-RPC response), a request body of the OpenAI, Anthropic or
//! Gemini APIs (or a Responses API response, which repeats its tools), a Gemini `Tool` with its
//! `function_declarations`, the older OpenAI `functions` list, or a Bedrock Converse
//! `toolConfig` (bare, or in its request), whose `cachePoint` markers are not tools.

use serde_json::Value;

use super::formats::Format;
use llmtool_format::span::Span;

/// One entry of a file of several tools: where it is (`tools[2]`), the value, and the format
/// its container implies, if any (an entry of `prompts/list` is an MCP prompt).
#[derive(Debug, Clone, PartialEq)]
pub struct ListEntry<'a> {
    pub at: String,
    pub value: &'a Value,
    pub implied: Option<Format>,
}

/// The tools `value` holds, or `None` when it is a single tool (or nothing known).
pub fn entries(value: &Value) -> Option<Vec<ListEntry<'_>>> {
    let mut found = Vec::new();
    match value {
        Value::Array(items) => flatten(items, "", None, &mut found),
        Value::Object(object) => {
            // A JSON-RPC response carries the list in its `result`; a Converse request, in its
            // `toolConfig`.
            let (object, prefix) = match (object.get("result"), object.get("toolConfig")) {
                (Some(Value::Object(result)), _) => (result, "result."),
                (_, Some(Value::Object(config))) => (config, "toolConfig."),
                _ => (object, ""),
            };
            let lists: [(&str, Option<Format>); 5] = [
                ("tools", None),
                ("prompts", Some(Format::McpPrompt)),
                ("function_declarations", Some(Format::Gemini)),
                ("functionDeclarations", Some(Format::Gemini)),
                ("functions", None),
            ];
            let (key, items, implied) = lists.iter().find_map(|&(key, implied)| {
                object.get(key).and_then(Value::as_array).map(|items| (key, items, implied))
            })?;
            flatten(items, &format!("{prefix}{key}"), implied, &mut found);
        }
        _ => return None,
    }
    Some(found)
}

/// The entries of `items` (at `path`), with a Gemini `Tool` object's declarations in its place.
fn flatten<'a>(
    items: &'a [Value],
    path: &str,
    implied: Option<Format>,
    found: &mut Vec<ListEntry<'a>>,
) {
    for (index, item) in items.iter().enumerate() {
        // Bedrock marks where its prompt cache ends with an entry of its own among the tools.
        if item.get("cachePoint").is_some() && item.get("toolSpec").is_none() {
            continue;
        }
        let at = format!("{path}[{index}]");
        let declarations = ["function_declarations", "functionDeclarations"]
            .iter()
            .find_map(|key| item.get(key).and_then(Value::as_array));
        match declarations {
            Some(declarations) => {
                flatten(
                    declarations,
                    &format!("{at}.function_declarations"),
                    Some(Format::Gemini),
                    found,
                );
            }
            None => found.push(ListEntry { at, value: item, implied }),
        }
    }
}

/// Where the entry at `at` (as [`ListEntry::at`] names it: `result.tools[2]`) is written in
/// `text`, the JSON the entries were read from; `None` if `at` does not lead to a value.
pub(crate) fn span_of(text: &str, at: &str) -> Option<Span> {
    let tree = llmtool_format::syntax::parse(text);
    let mut node = tree.root.as_ref()?;
    for step in at.split('.') {
        let (key, indexes) = step.split_once('[').map_or((step, ""), |(key, rest)| (key, rest));
        if !key.is_empty() {
            node = &node.get(key)?.value;
        }
        for index in indexes.split('[').filter(|index| !index.is_empty()) {
            let index: usize = index.strip_suffix(']')?.parse().ok()?;
            node = node.as_array()?.get(index)?;
        }
    }
    Some(node.span)
}
