//! `llmtool test --init TOOL`: a starter test file written from the tool, which passes on any
//! model that answers as the tool's expected output says: one case with the variables'
//! defaults (or an example value), whose answer must not be blank, must parse when JSON is
//! expected, and must be one of the allowed values of a limited tool. The cases that pin down
//! what a good answer is are the user's to add: only they know which inputs mean what.

use llmtool_format::model::{Tool, VariableKind};
use llmtool_format::output::{OutputFormat, OutputKind, OutputSpec};
use llmtool_format::template::{ToolTemplate, Value as TemplateValue};
use serde_json::{Value, json};

/// The starter test file of `tool` (called `tool_name` beside it), as JSON.
pub fn starter(tool: &Tool, tool_name: &str) -> Value {
    let template = ToolTemplate::new(tool);
    let mut vars = serde_json::Map::new();
    for variable in template.variables() {
        let value = match (&variable.default, variable.kind) {
            (Some(TemplateValue::Text(text)), _) => json!(text),
            (Some(TemplateValue::List(items)), _) => json!(items),
            (None, VariableKind::SingleSelect) => {
                variable.allowed_values.first().map_or(Value::Null, |v| json!(v))
            }
            (None, VariableKind::MultiSelect) => {
                json!(variable.allowed_values.iter().take(1).collect::<Vec<_>>())
            }
            (None, _) => json!(format!("an example {}", variable.name.replace('_', " "))),
        };
        vars.insert(variable.name.clone(), value);
    }
    let spec = OutputSpec::of(tool);
    let mut checks = vec![json!({ "type": "regex", "value": "\\S" })];
    if spec.format == Some(OutputFormat::Json) {
        checks.push(json!({ "type": "json" }));
    }
    let mut file = json!({
        "description": "Written by `llmtool test --init`. Its case checks only what the tool's expected output promises: an answer that is not blank, valid JSON, an allowed value. Add cases with your own values and what each answer must hold (`equals`, `contains`, `judge`, ...).",
        "tool": tool_name,
    });
    if let OutputKind::Limited { allowed } = &spec.kind
        && !allowed.is_empty()
    {
        file["assert"] = json!([{ "type": "one_of", "value": allowed }]);
    }
    file["cases"] = json!([{ "name": "the defaults", "vars": vars, "assert": checks }]);
    file
}
