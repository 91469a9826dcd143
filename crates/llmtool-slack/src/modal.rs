//! A tool's variables as a Slack modal, and the submitted modal's values back as the JSON
//! object a run takes: a text variable is a text input (several lines), a single-select a
//! menu, a multi-select a menu of several choices; a variable with a default is optional and
//! starts at its default.
//!
//! Slack's limits are kept: a title of 24 characters, an option's text of 75 (options are
//! known by their place in the list, not their text, so a long allowed value still comes
//! back whole), 100 options a menu and 100 blocks a modal.

use llmtool_format::model::VariableKind;
use llmtool_format::template::{Value as Given, VariableSpec};
use serde_json::{Map, Value, json};

use crate::payloads::View;

/// The `callback_id` of the modal that runs a tool.
pub const RUN_CALLBACK: &str = "llmtool_run";
/// The action id of every input of the modal.
const ACTION: &str = "value";
const TITLE_CHARS: usize = 24;
const OPTION_CHARS: usize = 75;
const LABEL_CHARS: usize = 2000;
const OPTIONS: usize = 100;
const BLOCKS: usize = 100;

/// The modal that runs the tool `title` (its name), with `metadata` kept for the submission
/// (which tool, where to answer).
pub fn run_modal(title: &str, metadata: &str, variables: &[VariableSpec]) -> Value {
    let blocks: Vec<Value> = variables.iter().take(BLOCKS).enumerate().map(input).collect();
    json!({
        "type": "modal",
        "callback_id": RUN_CALLBACK,
        "private_metadata": metadata,
        "title": plain(&shortened(title, TITLE_CHARS)),
        "submit": plain("Run"),
        "close": plain("Cancel"),
        "blocks": blocks,
    })
}

/// The values of a submitted modal made by [`run_modal`] with `variables`: an object with a
/// string for each text or single-select variable given, and a list for each multi-select.
/// What was left empty is left out (a default then holds, or the run says what is missing).
pub fn submitted_values(view: &View, variables: &[VariableSpec]) -> Map<String, Value> {
    let mut values = Map::new();
    for (index, variable) in variables.iter().enumerate().take(BLOCKS) {
        let Some(state) = view.state.values.get(&block_id(index)).and_then(|b| b.get(ACTION))
        else {
            continue;
        };
        let chosen = |option: &Value| {
            let place = option["value"].as_str()?.parse::<usize>().ok()?;
            variable.allowed_values.get(place).cloned()
        };
        let value = match variable.kind {
            VariableKind::MultiSelect => {
                let options = state["selected_options"].as_array();
                let list: Vec<Value> =
                    options.into_iter().flatten().filter_map(chosen).map(Value::String).collect();
                (!list.is_empty()).then_some(Value::Array(list))
            }
            VariableKind::SingleSelect => chosen(&state["selected_option"]).map(Value::String),
            VariableKind::Text => state["value"]
                .as_str()
                .filter(|text| !text.trim().is_empty())
                .map(|text| Value::String(text.to_owned())),
        };
        if let Some(value) = value {
            values.insert(variable.name.clone(), value);
        }
    }
    values
}

/// The input block of the variable at `index`.
fn input((index, variable): (usize, &VariableSpec)) -> Value {
    let options: Vec<Value> = variable
        .allowed_values
        .iter()
        .take(OPTIONS)
        .enumerate()
        .map(|(place, text)| json!({"text": plain(&shortened(text, OPTION_CHARS)), "value": place.to_string()}))
        .collect();
    let option_of = |text: &str| {
        let place = variable.allowed_values.iter().position(|allowed| allowed == text)?;
        options.get(place).cloned()
    };
    let mut element = match variable.kind {
        VariableKind::Text => {
            let mut element = json!({"type": "plain_text_input", "multiline": true});
            if let Some(Given::Text(text)) = &variable.default {
                element["initial_value"] = json!(text);
            }
            element
        }
        VariableKind::SingleSelect => {
            let mut element = json!({"type": "static_select", "options": options});
            if let Some(option) =
                variable.default.as_ref().and_then(|d| d.first()).and_then(option_of)
            {
                element["initial_option"] = option;
            }
            element
        }
        VariableKind::MultiSelect => {
            let mut element = json!({"type": "multi_static_select", "options": options});
            let initial: Vec<Value> = match &variable.default {
                Some(Given::List(items)) => items.iter().filter_map(|i| option_of(i)).collect(),
                Some(Given::Text(text)) => option_of(text).into_iter().collect(),
                None => Vec::new(),
            };
            if !initial.is_empty() {
                element["initial_options"] = json!(initial);
            }
            element
        }
    };
    element["action_id"] = json!(ACTION);
    let mut block = json!({
        "type": "input",
        "block_id": block_id(index),
        "label": plain(&shortened(&variable.name, LABEL_CHARS)),
        "optional": !variable.is_required(),
        "element": element,
    });
    if let Some(description) = variable.description.as_deref().filter(|d| !d.trim().is_empty()) {
        block["hint"] = plain(&shortened(description, LABEL_CHARS));
    }
    block
}

fn block_id(index: usize) -> String {
    format!("variable_{index}")
}

fn plain(text: &str) -> Value {
    json!({"type": "plain_text", "text": text})
}

/// `text` in at most `most` characters (cut with `…`).
fn shortened(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(most - 1).collect();
    cut.push('…');
    cut
}

/// The first item of a default (a single-select's is one text).
trait First {
    fn first(&self) -> Option<&str>;
}

impl First for Given {
    fn first(&self) -> Option<&str> {
        match self {
            Given::Text(text) => Some(text),
            Given::List(items) => items.first().map(String::as_str),
        }
    }
}

#[cfg(test)]
mod tests {
    use llmtool_format::Document;
    use llmtool_format::template::ToolTemplate;

    use super::*;
    use crate::payloads::ViewState;

    fn variables() -> Vec<VariableSpec> {
        let tool = r#"{"model_prompt": "{{topic}} {{tone}} {{angles}}", "metadata": {"prompt_name": "A poet with a very long name indeed",
            "variables": [
              {"name": "topic", "type": "text", "description": "What about."},
              {"name": "tone", "type": "single-select", "allowed_values": ["warm", "a tone whose name is far longer than the seventy-five characters Slack shows"], "default": "warm"},
              {"name": "angles", "type": "multi-select", "allowed_values": ["SWOT", "PESTLE", "Porter"], "default": ["SWOT", "Porter"]}]}}"#;
        let document = Document::from_text(tool.to_owned());
        ToolTemplate::new(document.tool.as_ref().unwrap()).variables().to_vec()
    }

    #[test]
    fn each_kind_of_variable_is_its_input_with_its_default() {
        let modal = run_modal("A poet with a very long name indeed", "poet", &variables());
        assert_eq!(modal["title"]["text"], "A poet with a very long…");
        assert_eq!(modal["callback_id"], RUN_CALLBACK);
        let blocks = modal["blocks"].as_array().unwrap();
        assert_eq!(blocks[0]["element"]["type"], "plain_text_input");
        assert_eq!(blocks[0]["optional"], false);
        assert_eq!(blocks[0]["hint"]["text"], "What about.");
        assert_eq!(blocks[1]["element"]["type"], "static_select");
        assert_eq!(blocks[1]["element"]["initial_option"]["value"], "0");
        let long = blocks[1]["element"]["options"][1]["text"]["text"].as_str().unwrap();
        assert_eq!(long.chars().count(), 75);
        assert_eq!(blocks[2]["element"]["type"], "multi_static_select");
        let initial: Vec<&str> = blocks[2]["element"]["initial_options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["value"].as_str().unwrap())
            .collect();
        assert_eq!(initial, ["0", "2"]);
        assert_eq!(blocks[2]["optional"], true);
    }

    #[test]
    fn a_submission_gives_back_each_value_whole() {
        let state = json!({
            "variable_0": {"value": {"type": "plain_text_input", "value": "tides"}},
            "variable_1": {"value": {"type": "static_select", "selected_option": {"value": "1"}}},
            "variable_2": {"value": {"type": "multi_static_select", "selected_options": [{"value": "1"}, {"value": "9"}]}}
        });
        let view = View {
            callback_id: RUN_CALLBACK.into(),
            private_metadata: "poet".into(),
            state: ViewState { values: state.as_object().unwrap().clone() },
        };
        let values = submitted_values(&view, &variables());
        assert_eq!(
            Value::Object(values),
            json!({"topic": "tides",
                "tone": "a tone whose name is far longer than the seventy-five characters Slack shows",
                "angles": ["PESTLE"]})
        );
        // Nothing chosen is left out, for the defaults to hold.
        let empty = View { state: ViewState::default(), ..view };
        assert!(submitted_values(&empty, &variables()).is_empty());
    }
}
