//! Placeholders and the variables they name: go to definition, find references, rename, the
//! document's outline, and what hovering a placeholder or a variable shows.

use llmtool_format::Span;
use llmtool_format::model::{DefaultValue, Tool, Variable};
use llmtool_format::syntax::literal::Escapes;
use llmtool_format::syntax::quote;
use llmtool_format::template::{Inputs, ToolTemplate, placeholders};

use crate::files::OpenFile;

/// One `{{name}}` of `model_prompt`, with its span in the file (braces included).
#[derive(Debug, Clone)]
pub struct Use {
    pub name: String,
    pub span: Span,
}

/// Every placeholder of the file's prompt, in order.
pub fn uses(file: &OpenFile) -> Vec<Use> {
    let Some(tool) = &file.document.tool else { return Vec::new() };
    let Some(prompt) = &tool.model_prompt else { return Vec::new() };
    let escapes = Escapes::of(file.text(), prompt.span);
    placeholders(&prompt.value)
        .map(|p| Use { name: p.name.to_owned(), span: escapes.span(p.range) })
        .collect()
}

/// What the cursor is on, for the features that follow a variable.
#[derive(Debug, Clone)]
pub enum Target<'a> {
    /// A placeholder in the prompt.
    Placeholder(Use),
    /// A variable's `name` value.
    Declaration(&'a Variable),
}

impl Target<'_> {
    pub fn name(&self) -> &str {
        match self {
            Target::Placeholder(u) => &u.name,
            Target::Declaration(v) => v.name.value.trim(),
        }
    }
}

/// The placeholder or variable name at `offset` (its ends included, as an editor's cursor
/// right after a word is still on it).
pub fn target_at(file: &OpenFile, offset: usize) -> Option<Target<'_>> {
    let tool = file.document.tool.as_ref()?;
    let on = |span: Span| span.start <= offset && offset <= span.end;
    if let Some(found) = uses(file).into_iter().find(|u| on(u.span)) {
        return Some(Target::Placeholder(found));
    }
    tool.variables().iter().find(|v| on(v.name.span)).map(Target::Declaration)
}

/// The declared variable called `name`.
pub fn variable<'t>(tool: &'t Tool, name: &str) -> Option<&'t Variable> {
    tool.variables().iter().find(|v| v.name.value.trim() == name)
}

/// The spans of every use of `name`, and of its declaration when asked.
pub fn references(file: &OpenFile, name: &str, with_declaration: bool) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    if with_declaration
        && let Some(declared) = file.document.tool.as_ref().and_then(|t| variable(t, name))
    {
        spans.push(declared.name.span);
    }
    spans.extend(uses(file).into_iter().filter(|u| u.name == name).map(|u| u.span));
    spans
}

/// Why a rename cannot be done.
#[derive(Debug, PartialEq, Eq)]
pub enum RenameError {
    NotAVariable,
    Empty,
    HasBraces,
    Taken(String),
}

impl std::fmt::Display for RenameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenameError::NotAVariable => write!(f, "only a declared variable can be renamed"),
            RenameError::Empty => write!(f, "a variable's name cannot be empty"),
            RenameError::HasBraces => write!(f, "a variable's name cannot hold `{{{{` or `}}}}`"),
            RenameError::Taken(name) => write!(f, "a variable called `{name}` already exists"),
        }
    }
}

/// The edits that rename the variable the cursor is on: its `name` value and every
/// placeholder that names it.
pub fn rename(
    file: &OpenFile,
    offset: usize,
    new_name: &str,
) -> Result<Vec<(Span, String)>, RenameError> {
    let tool = file.document.tool.as_ref().ok_or(RenameError::NotAVariable)?;
    let target = target_at(file, offset).ok_or(RenameError::NotAVariable)?;
    let old = target.name().to_owned();
    let declared = variable(tool, &old).ok_or(RenameError::NotAVariable)?;
    let new_name = new_name.trim();
    if new_name.is_empty() {
        return Err(RenameError::Empty);
    }
    if llmtool_format::template::holds_braces(new_name) {
        return Err(RenameError::HasBraces);
    }
    if new_name != old && variable(tool, new_name).is_some() {
        return Err(RenameError::Taken(new_name.to_owned()));
    }
    let mut edits = vec![(declared.name.span, quote(new_name))];
    // Inside the prompt's string literal, as `quote` writes the name's own value.
    let written = written_in_string(new_name);
    let placeholder = format!("{{{{{written}}}}}");
    edits.extend(
        uses(file).into_iter().filter(|u| u.name == old).map(|u| (u.span, placeholder.clone())),
    );
    Ok(edits)
}

/// `text` as it is written inside a JSON string literal: escaped, without the quotes.
pub fn written_in_string(text: &str) -> String {
    let quoted = quote(text);
    quoted[1..quoted.len() - 1].to_owned()
}

/// What hovering a placeholder or a variable's name shows, as Markdown.
pub fn describe_variable(variable: &Variable) -> String {
    let mut out = format!("**`{}`**: {}", variable.name.value.trim(), variable.kind().as_str());
    if let Some(description) = &variable.description {
        out.push_str(&format!("\n\n{}", description.value));
    }
    let allowed: Vec<String> = variable.allowed().map(|v| format!("`{v}`")).collect();
    if !allowed.is_empty() {
        out.push_str(&format!("\n\nAllowed: {}", allowed.join(", ")));
    }
    match variable.default.as_ref().map(|d| &d.value) {
        Some(DefaultValue::Text(text)) => out.push_str(&format!("\n\nDefault: `{text}`")),
        Some(DefaultValue::List(items)) => {
            let items: Vec<String> = items.iter().map(|i| format!("`{}`", i.value)).collect();
            out.push_str(&format!("\n\nDefault: {}", items.join(", ")));
        }
        None => out.push_str("\n\nNo default: required"),
    }
    out
}

/// The prompt rendered with the variables' defaults, or why it cannot be.
pub fn rendered_with_defaults(file: &OpenFile) -> String {
    let Some(tool) = &file.document.tool else { return String::new() };
    match ToolTemplate::new(tool).render(&Inputs::new()) {
        Ok(text) => format!("**Rendered with the defaults:**\n\n```text\n{text}\n```"),
        Err(problems) => {
            let reasons: Vec<String> =
                problems.iter().map(|p| format!("- {}", p.message)).collect();
            format!("**Cannot render with the defaults:**\n\n{}", reasons.join("\n"))
        }
    }
}
