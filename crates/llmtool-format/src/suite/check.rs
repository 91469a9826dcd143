//! Checking a test file against its tool: each case's values fill the prompt, and no
//! assertion expects an answer the tool can never give.

use serde_json::Value;

use super::codes::{CASE_VARIABLES, UNREACHABLE_ANSWER};
use super::model::{Check, TestFile};
use crate::diagnostic::Diagnostic;
use crate::model::Tool;
use crate::output::{OutputKind, OutputSpec, match_limited};
use crate::template::{Inputs, ToolTemplate};

/// The problems of `file` as tests of `tool`.
pub fn check_against(file: &TestFile, tool: &Tool) -> Vec<Diagnostic> {
    let template = ToolTemplate::new(tool);
    let mut out = Vec::new();
    for case in &file.cases {
        if let Err(problem) = render(&template, &case.vars) {
            out.push(
                Diagnostic::new(&CASE_VARIABLES, format!("{}: {problem}", case.name))
                    .at(case.vars_span),
            );
        }
    }
    if let OutputKind::Limited { allowed } = OutputSpec::of(tool).kind {
        let assertions = file.shared.iter().chain(file.cases.iter().flat_map(|c| &c.assertions));
        for assertion in assertions {
            let expected: Vec<&String> = match &assertion.check {
                Check::Equals(value) => vec![value],
                Check::OneOf(values) => values.iter().collect(),
                _ => continue,
            };
            if expected.iter().all(|value| !allowed.contains(value)) {
                // The enforced answer is always exactly one of the allowed values.
                let near = expected.iter().find_map(|value| match_limited(value, &allowed));
                let help = match near {
                    Some(value) => format!("the answer is written `{value}`"),
                    None => format!("the allowed values: {}", allowed.join(", ")),
                };
                out.push(
                    Diagnostic::new(
                        &UNREACHABLE_ANSWER,
                        "the tool only answers one of its allowed values, written as listed, so this never passes",
                    )
                    .at(assertion.span)
                    .with_help(help),
                );
            }
        }
    }
    out
}

/// The prompt `vars` make of `template`, or why they cannot.
pub fn render(
    template: &ToolTemplate,
    vars: &serde_json::Map<String, Value>,
) -> Result<String, String> {
    let values = resolved(template, vars)?;
    Ok(template.render_values(&values))
}

/// A case's `vars` as a smart tool's `execute` gets them (checked as [`render`] checks them).
pub fn smart_variables(
    template: &ToolTemplate,
    vars: &serde_json::Map<String, Value>,
) -> Result<serde_json::Map<String, Value>, String> {
    let values = resolved(template, vars)?;
    Ok(template.values_object(&values))
}

/// A case's `vars` checked against the tool's variables, one value each (defaults filled in).
fn resolved(
    template: &ToolTemplate,
    vars: &serde_json::Map<String, Value>,
) -> Result<Vec<crate::template::Value>, String> {
    let inputs = Inputs::from_json(&Value::Object(vars.clone()), template.variables())
        .map_err(|error| error.to_string())?;
    template.resolve(&inputs).map_err(|problems| {
        problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ")
    })
}
