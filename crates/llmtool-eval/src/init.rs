//! `llmtool test --init TOOL`: a starter test file written from the tool. A limited tool gets
//! a case per allowed value (each expecting it); any other tool one case with its defaults,
//! with checks its expected output allows (JSON parses, a length).

use llmtool_core::model::{Tool, VariableKind};
use llmtool_core::output::{OutputFormat, OutputKind, OutputSpec};
use llmtool_core::template::{ToolTemplate, Value as TemplateValue};
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
    let cases: Vec<Value> = match &spec.kind {
        OutputKind::Limited { allowed } if !allowed.is_empty() => allowed
            .iter()
            .map(|value| {
                json!({
                    "name": format!("answers {value}"),
                    "vars": vars,
                    "assert": [{ "type": "equals", "value": value }]
                })
            })
            .collect(),
        _ => {
            let mut checks = vec![json!({ "type": "max_length", "value": 4000 })];
            if spec.format == Some(OutputFormat::Json) {
                checks.push(json!({ "type": "json" }));
            }
            vec![json!({ "name": "the defaults", "vars": vars, "assert": checks })]
        }
    };
    let mut file = json!({ "tool": tool_name });
    if let OutputKind::Limited { allowed } = &spec.kind
        && !allowed.is_empty()
    {
        file["assert"] = json!([{ "type": "one_of", "value": allowed }]);
    }
    file["cases"] = json!(cases);
    file
}
