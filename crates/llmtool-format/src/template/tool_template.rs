//! A tool ready to render: its compiled prompt and its variables, and the checking of the
//! values given for them.

use foldhash::{HashSet, HashSetExt as _};

use serde::Serialize;

use crate::chat::{self, Turn};
use crate::diagnostic::Diagnostic;
use crate::model::{DefaultValue, Tool, VariableKind};
use crate::span::Span;
use crate::suggest::{closest, one_of};
use crate::template::problems::{
    DUPLICATE_VALUE, MISSING_VALUE, TOO_MANY_VALUES, UNKNOWN_VARIABLE, VALUE_NOT_ALLOWED,
};
use crate::template::{Inputs, Template, Value, placeholders};

/// One variable as rendering needs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariableSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: VariableKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_values: Vec<String>,
    /// Where the variable is declared (or, for an implicit one, first used) in the file.
    #[serde(skip)]
    pub declared_at: Span,
    /// Where its `allowed_values` are, if it has any.
    #[serde(skip)]
    pub allowed_at: Option<Span>,
}

impl VariableSpec {
    /// The values `item` holds when it is several allowed values of this multi-select joined
    /// with commas (`SWOT,PESTLE`) rather than one allowed value; `None` otherwise.
    pub fn joined_values<'a>(&self, item: &'a str) -> Option<Vec<&'a str>> {
        let allowed = |value: &str| self.allowed_values.iter().any(|a| a == value);
        let parts: Vec<&str> = item.split(',').map(str::trim).collect();
        let joined = self.kind == VariableKind::MultiSelect
            && parts.len() > 1
            && !allowed(item)
            && parts.iter().all(|part| allowed(part));
        joined.then_some(parts)
    }

    pub fn is_required(&self) -> bool {
        self.default.is_none()
    }
}

/// A tool's prompt compiled once, with its variables, to render any number of times.
#[derive(Debug, Clone)]
pub struct ToolTemplate {
    template: Template,
    /// A chat's turns, each compiled on its own (`None` when the tool is not a chat): values
    /// go into a turn and never open one.
    turns: Option<Vec<(&'static str, Template)>>,
    variables: Vec<VariableSpec>,
}

impl ToolTemplate {
    /// Prepares `tool`. With `metadata.variables`, the declared variables are the slots; without,
    /// every distinct `{{name}}` is a required text variable, in order of first use.
    pub fn new(tool: &Tool) -> Self {
        let variables: Vec<VariableSpec> = if tool.declares_variables() {
            tool.variables().iter().map(declared).collect()
        } else {
            implicit(tool)
        };
        let names: Vec<&str> = variables.iter().map(|v| v.name.as_str()).collect();
        let turns = tool.is_chat().then(|| {
            chat::split(tool.prompt())
                .into_iter()
                .map(|turn| (turn.role, Template::compile(&turn.text, &names)))
                .collect()
        });
        Self { template: Template::compile(tool.prompt(), &names), turns, variables }
    }

    /// Whether the tool is a chat, whose rendered prompt is its turns written out (see
    /// [`crate::chat`]).
    pub fn is_chat(&self) -> bool {
        self.turns.is_some()
    }

    pub fn variables(&self) -> &[VariableSpec] {
        &self.variables
    }

    /// Checks `inputs` against the variables and returns one value per variable (defaults filled
    /// in), or every problem found.
    pub fn resolve(&self, inputs: &Inputs) -> Result<Vec<Value>, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let names: HashSet<&str> = self.variables.iter().map(|v| v.name.as_str()).collect();
        // Listed once, however many unknown names are given.
        let mut listed: Option<String> = None;
        for input in inputs.iter() {
            if !names.contains(input.name.as_str()) {
                let mut diagnostic = Diagnostic::new(
                    &UNKNOWN_VARIABLE,
                    format!("the tool has no variable `{}`", input.name),
                );
                diagnostic =
                    match closest(&input.name, self.variables.iter().map(|v| v.name.as_str())) {
                        Some(near) => diagnostic.with_help(format!("did you mean `{near}`?")),
                        None if self.variables.is_empty() => {
                            diagnostic.with_help("the tool takes no variables")
                        }
                        None => {
                            let listed = listed.get_or_insert_with(|| {
                                one_of(self.variables.iter().map(|v| v.name.as_str()))
                            });
                            diagnostic.with_help(format!("its variables are {listed}"))
                        }
                    };
                problems.push(diagnostic);
            }
        }
        let values: Vec<Value> = self
            .variables
            .iter()
            .filter_map(|spec| resolve_one(spec, inputs, &mut problems))
            .collect();
        if problems.is_empty() { Ok(values) } else { Err(problems) }
    }

    /// Checks `inputs` and renders the prompt.
    pub fn render(&self, inputs: &Inputs) -> Result<String, Vec<Diagnostic>> {
        self.resolve(inputs).map(|values| self.render_values(&values))
    }

    /// The prompt as literal runs and slots; slot `i` is variable `i` of
    /// [`ToolTemplate::variables`].
    pub fn pieces(&self) -> impl Iterator<Item = super::Piece<'_>> {
        self.template.pieces()
    }

    /// Resolved values (one per variable, as from [`ToolTemplate::resolve`]) as the dict a
    /// smart tool's `execute(variables)` gets: a string for each text or single-select value,
    /// a list of strings for a multi-select.
    pub fn values_object(&self, values: &[Value]) -> serde_json::Map<String, serde_json::Value> {
        self.variables
            .iter()
            .zip(values)
            .map(|(spec, value)| {
                let value = match value {
                    Value::Text(text) => serde_json::Value::String(text.clone()),
                    Value::List(items) => serde_json::json!(items),
                };
                (spec.name.clone(), value)
            })
            .collect()
    }

    /// Renders already resolved values (one per variable, as from [`ToolTemplate::resolve`]):
    /// a chat's turns written out as one text, where a value's line that reads as a role line
    /// is escaped.
    pub fn render_values(&self, values: &[Value]) -> String {
        match &self.turns {
            Some(_) => chat::join(&self.render_turns(values)),
            None => self.template.render(values),
        }
    }

    /// A chat's turns as their roles and literal runs and slots, as [`ToolTemplate::pieces`]
    /// gives the whole prompt; `None` when the tool is not a chat.
    pub fn turn_pieces(&self) -> Option<Vec<(&'static str, Vec<super::Piece<'_>>)>> {
        let turns = self.turns.as_ref()?;
        Some(turns.iter().map(|(role, template)| (*role, template.pieces().collect())).collect())
    }

    /// The messages resolved values make: a chat's turns, each rendered on its own, or the
    /// whole prompt as one user message.
    pub fn render_turns(&self, values: &[Value]) -> Vec<Turn> {
        match &self.turns {
            Some(turns) => turns
                .iter()
                .map(|(role, template)| Turn::new(role, template.render(values)))
                .collect(),
            None => vec![Turn::new(chat::USER, self.template.render(values))],
        }
    }
}

fn declared(variable: &crate::model::Variable) -> VariableSpec {
    VariableSpec {
        name: variable.name.value.trim().to_owned(),
        kind: variable.kind(),
        description: variable.description.as_ref().map(|d| d.value.clone()),
        default: variable.default.as_ref().map(|d| match &d.value {
            DefaultValue::Text(text) if variable.kind() == VariableKind::MultiSelect => {
                Value::List(vec![text.clone()])
            }
            DefaultValue::Text(text) => Value::Text(text.clone()),
            DefaultValue::List(items) => {
                Value::List(items.iter().map(|i| i.value.clone()).collect())
            }
        }),
        allowed_values: variable.allowed().map(str::to_owned).collect(),
        declared_at: variable.name.span,
        allowed_at: variable.allowed_values.as_ref().map(|list| list.span),
    }
}

fn implicit(tool: &Tool) -> Vec<VariableSpec> {
    let mut seen = HashSet::new();
    let at = tool.model_prompt.as_ref().map_or(Span::default(), |p| p.span);
    placeholders(tool.prompt())
        .filter(|p| seen.insert(p.name))
        .map(|p| VariableSpec {
            name: p.name.to_owned(),
            kind: VariableKind::Text,
            description: None,
            default: None,
            allowed_values: Vec::new(),
            declared_at: at,
            allowed_at: None,
        })
        .collect()
}

fn resolve_one(
    spec: &VariableSpec,
    inputs: &Inputs,
    problems: &mut Vec<Diagnostic>,
) -> Option<Value> {
    let name = &spec.name;
    let Some(input) = inputs.get(name) else {
        if spec.default.is_none() {
            problems.push(
                Diagnostic::new(
                    &MISSING_VALUE,
                    format!("no value for `{name}`, which has no default"),
                )
                .at_labelled(spec.declared_at, "declared here")
                .with_help("give it a value, or give the variable a `default` in the tool file"),
            );
        }
        return spec.default.clone();
    };
    let count = problems.len();
    if spec.kind != VariableKind::MultiSelect && (input.as_list || input.items.len() != 1) {
        problems.push(
            Diagnostic::new(
                &TOO_MANY_VALUES,
                format!(
                    "`{name}` is a {} variable and takes one value, got {}",
                    spec.kind,
                    input.items.len()
                ),
            )
            .at_labelled(spec.declared_at, "declared here")
            .with_help("only multi-select variables take several values"),
        );
    }
    if spec.kind.is_select() {
        let allowed: HashSet<&str> = spec.allowed_values.iter().map(String::as_str).collect();
        let mut listed_values: Option<String> = None;
        let mut seen = HashSet::new();
        for item in &input.items {
            if !seen.insert(item.as_str()) {
                problems.push(
                    Diagnostic::new(
                        &DUPLICATE_VALUE,
                        format!("`{item}` is given twice for `{name}`"),
                    )
                    .at_labelled(spec.declared_at, "declared here"),
                );
            } else if !allowed.contains(item.as_str()) {
                let mut diagnostic = Diagnostic::new(
                    &VALUE_NOT_ALLOWED,
                    format!("`{item}` is not an allowed value of `{name}`"),
                )
                .at_labelled(spec.allowed_at.unwrap_or(spec.declared_at), "the allowed values");
                let joined = spec.joined_values(item);
                diagnostic = match closest(item, spec.allowed_values.iter().map(String::as_str)) {
                    // `SWOT,PESTLE`: several values written as one.
                    _ if let Some(parts) = joined => diagnostic.with_help(format!(
                        "give the values one by one, not joined with commas: {}",
                        parts.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
                    )),
                    Some(near) => diagnostic.with_help(format!("did you mean `{near}`?")),
                    None => {
                        let listed = listed_values.get_or_insert_with(|| {
                            one_of(spec.allowed_values.iter().map(String::as_str))
                        });
                        diagnostic.with_help(format!("the allowed values are {listed}"))
                    }
                };
                problems.push(diagnostic);
            }
        }
    }
    if problems.len() > count {
        return None;
    }
    Some(match spec.kind {
        VariableKind::MultiSelect => Value::List(input.items.clone()),
        _ => Value::Text(input.items[0].clone()),
    })
}
