//! Function calls on a local model, in the convention of the chat templates that take tools
//! (Qwen2.5's, Hermes'): the functions go to the template as `tools`, the model writes each
//! call as `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, and the results come
//! back as `tool` messages. Small models often leave the tags out and write the call's JSON
//! alone at the start of their answer: that is read as a call too, when it names a function
//! offered (llama.cpp reads these templates' output the same way).
//!
//! While the model writes, the text before its first call is streamed and the calls are held
//! back ([`CallText`]); once it is done, [`split_calls`] reads them. The JSON inside each call
//! is kept well-formed by constrained decoding ([`crate::constrain::Grammar::calls`]), as
//! llama.cpp does for the same templates.

use llmtool_providers::functions::{FunctionCall, FunctionSpec};
use serde_json::{Value, json};

/// What opens a call in the model's answer.
pub const OPEN: &str = "<tool_call>";
/// What closes it.
pub const CLOSE: &str = "</tool_call>";

/// `functions` as a chat template takes them (`tools`, in the form of OpenAI's API and the
/// Hugging Face templates).
pub fn template_tools(functions: &[FunctionSpec]) -> Vec<Value> {
    functions
        .iter()
        .map(|function| {
            json!({"type": "function", "function": {
                "name": function.name,
                "description": function.description,
                "parameters": function.parameters,
            }})
        })
        .collect()
}

/// `calls` as a template's `tool_calls` of an assistant message: the arguments as the JSON
/// they are (the templates write them with `tojson`), or as text when they are not JSON.
pub fn template_calls(calls: &[FunctionCall]) -> Vec<Value> {
    calls
        .iter()
        .map(|call| {
            let arguments = serde_json::from_str::<Value>(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            json!({"id": call.id, "type": "function",
                "function": {"name": call.name, "arguments": arguments}})
        })
        .collect()
}

/// The text of an answer as it is written, with the calls held back: what comes before the
/// first `<tool_call>` is passed on (less any end that may be the start of one), and nothing
/// after it; an answer that opens with `{` is held whole (it may be a call without tags).
#[derive(Debug, Default)]
pub struct CallText {
    held: String,
    calling: bool,
    /// Some text that is not white space was passed on.
    started: bool,
}

impl CallText {
    /// The part of `text` (after what came before) that may be shown now.
    pub fn push(&mut self, text: &str) -> String {
        if self.calling {
            return String::new();
        }
        self.held.push_str(text);
        if !self.started {
            match self.held.trim_start().chars().next() {
                None => return String::new(),
                Some('{') => {
                    self.calling = true;
                    return String::new();
                }
                Some(_) => self.started = true,
            }
        }
        if let Some(at) = self.held.find(OPEN) {
            self.calling = true;
            let shown = self.held[..at].to_owned();
            self.held.clear();
            return shown;
        }
        // Keep back the longest end of the text that `<tool_call>` could start with.
        let keep = (1..OPEN.len()).rev().find(|&n| self.held.ends_with(&OPEN[..n])).unwrap_or(0);
        let shown_up_to = self.held.len() - keep;
        self.held.drain(..shown_up_to).collect()
    }

    /// What was held back at the end, when no call followed.
    pub fn finish(&mut self) -> String {
        if self.calling { String::new() } else { std::mem::take(&mut self.held) }
    }
}

/// Splits a whole answer into the text before its calls and the calls, each given the id
/// `call_N` (the model gives none). A call whose JSON is not `{"name": "...", "arguments":
/// ...}` ends the calls, and it and what follows stay in the text, for the run to read as the
/// answer. An answer without tags whose first JSON objects name functions of `offered` is
/// those calls.
pub fn split_calls(answer: &str, offered: &[&str]) -> (String, Vec<FunctionCall>) {
    let Some(first) = answer.find(OPEN) else { return bare_calls(answer, offered) };
    let mut calls = Vec::new();
    let mut rest = &answer[first..];
    while let Some(body) = rest.trim_start().strip_prefix(OPEN) {
        let (inside, after) = body.split_once(CLOSE).unwrap_or((body, ""));
        let Some(call) = read_call(inside, calls.len()) else { break };
        calls.push(call);
        rest = after;
    }
    if calls.is_empty() {
        return (answer.to_owned(), calls);
    }
    let mut text = answer[..first].trim_end().to_owned();
    let unread = rest.trim();
    if !unread.is_empty() {
        // Something after the calls that is not a call: the model's words, kept.
        text.push_str(if text.is_empty() { "" } else { "\n" });
        text.push_str(unread);
    }
    (text, calls)
}

/// The calls an answer without tags opens with: its leading JSON objects, while each names a
/// function of `offered`; what follows is the text.
fn bare_calls(answer: &str, offered: &[&str]) -> (String, Vec<FunctionCall>) {
    let mut calls = Vec::new();
    let mut values = serde_json::Deserializer::from_str(answer).into_iter::<Value>();
    let mut read = 0;
    while let Some(Ok(value)) = values.next() {
        let call = read_call(&value.to_string(), calls.len());
        match call.filter(|call| offered.contains(&call.name.as_str())) {
            Some(call) => calls.push(call),
            None => break,
        }
        read = values.byte_offset();
    }
    if calls.is_empty() {
        return (answer.to_owned(), calls);
    }
    (answer[read..].trim().to_owned(), calls)
}

/// One call's JSON, or `None` when it is not one.
fn read_call(inside: &str, index: usize) -> Option<FunctionCall> {
    let Ok(Value::Object(mut call)) = serde_json::from_str::<Value>(inside.trim()) else {
        return None;
    };
    let Some(Value::String(name)) = call.remove("name") else { return None };
    let arguments = match call.remove("arguments").or_else(|| call.remove("parameters")) {
        None | Some(Value::Null) => String::new(),
        // Some models write the arguments as a JSON string.
        Some(Value::String(text)) => text,
        Some(arguments) => arguments.to_string(),
    };
    Some(FunctionCall { id: format!("call_{index}"), name, arguments, signature: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(pieces: &[&str]) -> String {
        let mut text = CallText::default();
        let mut shown: String = pieces.iter().map(|piece| text.push(piece)).collect();
        shown.push_str(&text.finish());
        shown
    }

    #[test]
    fn the_text_before_a_call_is_shown_and_the_call_is_not() {
        assert_eq!(streamed(&["Let me look.", "\n<tool", "_call>\n{\"name\""]), "Let me look.\n");
        assert_eq!(streamed(&["<tool_call>", "{}", "</tool_call>"]), "");
        // A `<` that starts no call is shown once the text shows it is none.
        assert_eq!(streamed(&["1 <", " 2 and <tool", "s>"]), "1 < 2 and <tools>");
        assert_eq!(streamed(&["ends with <tool_ca"]), "ends with <tool_ca");
        // An answer that opens with `{` may be a call without its tags: it is held.
        assert_eq!(streamed(&["\n", "{\"name\"", ": \"f\"}"]), "");
        assert_eq!(streamed(&[" ", "Hi {x}"]), " Hi {x}");
    }

    #[test]
    fn calls_are_read_with_their_arguments_and_numbered() {
        let answer = "I will query it.\n<tool_call>\n{\"name\": \"query_database\", \"arguments\": {\"sql\": \"SELECT 1\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"fetch_url\", \"arguments\": \"{\\\"url\\\": \\\"http://a.test/\\\"}\"}\n</tool_call>";
        let (text, calls) = split_calls(answer, &[]);
        assert_eq!(text, "I will query it.");
        assert_eq!(
            calls,
            [
                FunctionCall {
                    id: "call_0".into(),
                    name: "query_database".into(),
                    arguments: r#"{"sql":"SELECT 1"}"#.into(),
                    signature: None,
                },
                FunctionCall {
                    id: "call_1".into(),
                    name: "fetch_url".into(),
                    arguments: r#"{"url": "http://a.test/"}"#.into(),
                    signature: None,
                },
            ]
        );
    }

    #[test]
    fn an_unclosed_call_is_read_and_a_broken_one_stays_text() {
        let (text, calls) = split_calls("<tool_call>\n{\"name\": \"web_search\"}", &[]);
        assert_eq!((text.as_str(), calls.len()), ("", 1));
        assert_eq!(calls[0].arguments, "");
        let broken = "Here: <tool_call>{\"name\": </tool_call>";
        assert_eq!(split_calls(broken, &[]), (broken.to_owned(), Vec::new()));
        assert_eq!(split_calls("No calls.", &[]), ("No calls.".to_owned(), Vec::new()));
    }

    /// What Qwen2.5-Coder-0.5B wrote at temperature 0 for the SQL Assistant (database): its
    /// calls without tags, then calls of functions nobody offered.
    #[test]
    fn leading_json_objects_that_name_offered_functions_are_calls() {
        let answer = "{\"name\": \"query_database\", \"arguments\": {\"database\": \"shop\", \"sql\": \"SELECT COUNT(*) FROM orders\"}}\n{\"name\": \"database_schema\", \"arguments\": {\"database\": \"shop\"}}\n{\"name\": \"rows\", \"arguments\": {}}\nThat is all.";
        let offered = ["query_database", "database_schema"];
        let (text, calls) = split_calls(answer, &offered);
        let names: Vec<&str> = calls.iter().map(|call| call.name.as_str()).collect();
        assert_eq!(names, offered);
        assert_eq!(
            calls[0].arguments,
            r#"{"database":"shop","sql":"SELECT COUNT(*) FROM orders"}"#
        );
        assert_eq!(text, "{\"name\": \"rows\", \"arguments\": {}}\nThat is all.");
        // A JSON answer that names no function offered is an answer.
        let json = "{\"name\": \"Ada\", \"city\": \"London\"}";
        assert_eq!(split_calls(json, &offered), (json.to_owned(), Vec::new()));
    }

    #[test]
    fn functions_and_calls_take_the_templates_shapes() {
        let spec = FunctionSpec {
            name: "web_search".into(),
            description: "Searches the web.".into(),
            parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
        };
        assert_eq!(
            template_tools(&[spec])[0],
            json!({"type": "function", "function": {"name": "web_search",
                "description": "Searches the web.",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}})
        );
        let call = FunctionCall {
            id: "c".into(),
            name: "web_search".into(),
            arguments: "{\"q\":1}".into(),
            signature: None,
        };
        assert_eq!(template_calls(&[call])[0]["function"]["arguments"], json!({"q": 1}));
    }
}
