//! `llmtool render`: the prompt with values filled in, exactly as it would be sent.

mod args;

pub(crate) use args::{RenderArgs, RenderFormat};

use std::io::IsTerminal;
use std::path::Path;

use anyhow::Context as _;
use llmtool_format::Document;
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::report::{self, Source};
use llmtool_format::rules::variables::unclosed_placeholder::UNCLOSED_PLACEHOLDER;
use llmtool_format::rules::variables::undeclared_placeholder::UNDECLARED_PLACEHOLDER;
use llmtool_format::template::{Inputs, ToolTemplate, Value, VariableSpec};
use llmtool_runtime::ToolFile;
use serde::Serialize;

use crate::cli::VariableArgs;
use crate::outcome::Outcome;
use crate::{documents, io, secrets};

/// What `render --format json` prints.
#[derive(Serialize)]
struct Rendered<'a> {
    prompt: String,
    variables: serde_json::Map<String, serde_json::Value>,
    parameters: Option<serde_json::Value>,
    model_version: Vec<&'a str>,
    expected_output: Option<&'a llmtool_format::model::ExpectedOutput>,
}

pub(crate) fn run(args: &RenderArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.tool);
    let Some((document, template)) = load_tool(&args.tool, &name)? else {
        return Ok(Outcome::Problems);
    };
    if document.tool.as_ref().is_some_and(|tool| tool.code().is_some()) {
        anyhow::bail!(
            "{name} is a smart tool: it has no prompt to render; `llmtool run {name}` runs its code (`--dry-run` shows the values it gets)"
        );
    }
    let inputs = read_inputs(&args.variables, template.variables())?;
    let values = match template.resolve(&inputs) {
        Ok(values) => values,
        Err(problems) => {
            print_value_problems(
                &name,
                &document.text,
                &template,
                &inputs,
                &problems,
                ValuesFrom::Flags,
            );
            return Ok(Outcome::Problems);
        }
    };
    let prompt = template.render_values(&values);
    match args.format {
        RenderFormat::Text => {
            let mut bytes = prompt.into_bytes();
            if io::stdout_is_terminal() && !bytes.ends_with(b"\n") {
                bytes.push(b'\n');
            }
            io::write_stdout(&bytes)?;
        }
        RenderFormat::Json => {
            let tool = document.tool.as_ref().context("a checked tool has a model")?;
            let meta = tool.metadata.as_ref();
            let rendered = Rendered {
                prompt,
                variables: template
                    .variables()
                    .iter()
                    .zip(&values)
                    .map(|(spec, value)| (spec.name.clone(), value_json(value)))
                    .collect(),
                parameters: meta.and_then(|m| m.parameters.as_ref()).map(parameters_json),
                model_version: tool.models(),
                expected_output: meta.and_then(|m| m.expected_output.as_ref()),
            };
            let mut text = serde_json::to_string_pretty(&rendered)?;
            text.push('\n');
            io::write_stdout(text.as_bytes())?;
        }
    }
    Ok(Outcome::Ok)
}

/// Reads and checks a tool. On errors, prints them and returns `None`.
pub(crate) fn load_tool(
    path: &Path,
    name: &str,
) -> anyhow::Result<Option<(Document, ToolTemplate)>> {
    // `registry:SLUG` names a tool of the library.
    let in_library = path.to_str().and_then(llmtool_registry::Reference::from_path).is_some();
    let file = if in_library {
        let library = crate::registry::named()?;
        let file = ToolFile::open(path, io::max_file_bytes(), Some(&library))?;
        if let Some(note) = &file.note {
            eprintln!("warning: {note}");
        }
        file
    } else {
        ToolFile::from_bytes(name.to_owned(), io::read_input(path)?)
    };
    let name = file.name.as_str();
    match file.document.template() {
        Some(template) => {
            say_literal_placeholders(name, &file.document);
            Ok(Some((file.document, template)))
        }
        None => {
            let color = io::color_for(std::io::stderr().is_terminal());
            eprint!("{}", file.report(&file.errors(), color));
            eprintln!("{name}: the tool has errors; `llmtool check {name}` shows every finding");
            Ok(None)
        }
    }
}

/// Says on standard error each `{{...}}` that the model would be sent as it is (a name that
/// is not declared, or a placeholder with a brace missing), since `check` may never have run:
/// a typo must not reach a model unnoticed.
pub(crate) fn say_literal_placeholders(name: &str, document: &Document) {
    let literal = [UNDECLARED_PLACEHOLDER.code, UNCLOSED_PLACEHOLDER.code];
    let source = Source::new(name, &document.text);
    for diagnostic in document.diagnostics.iter().filter(|d| literal.contains(&d.rule.code)) {
        let start = diagnostic.primary.as_ref().map_or(0, |label| label.span.start);
        let at = source.line_column(start);
        let help = diagnostic.help.as_deref().map(|help| format!(" ({help})")).unwrap_or_default();
        eprintln!(
            "warning: {name}:{}:{}: {}{help}",
            at.line,
            at.column,
            secrets::redact(&diagnostic.message)
        );
    }
}

/// The values for `variables` from `--vars FILE` (read as `Inputs::add_json` says) and then
/// `--var NAME=VALUE` (which wins).
pub(crate) fn read_inputs(
    args: &VariableArgs,
    variables: &[VariableSpec],
) -> anyhow::Result<Inputs> {
    let mut inputs = Inputs::new();
    if let Some(file) = &args.vars_file {
        let bytes = io::read_input(file)?;
        let mut json: serde_json::Value = serde_json::from_slice(&bytes)
            .with_context(|| format!("`{}` is not valid JSON", file.display()))?;
        let folder = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        documents::in_json(&mut json, folder)?;
        inputs = Inputs::from_json(&json, variables)
            .with_context(|| format!("in `{}`", file.display()))?;
    }
    let mut flags = Inputs::new();
    for pair in &args.vars {
        let (name, value) = pair
            .split_once('=')
            .with_context(|| format!("`--var {pair}` must be written `NAME=VALUE`"))?;
        flags.push(name.trim(), documents::value(name.trim(), value, None)?.into_owned());
    }
    inputs.extend(flags);
    Ok(inputs)
}

/// Where a command's values come from, for the hints that say how to give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValuesFrom {
    /// `--var` and `--vars` (`render`, `run`).
    Flags,
    /// A model's arguments to the exported function form (`call`).
    Arguments,
}

/// Prints the problems of the values given for `template`, then how to give values (`from`):
/// the core's messages say what is wrong in words any front end can use; the flags are this
/// one's.
pub(crate) fn print_value_problems(
    name: &str,
    text: &str,
    template: &ToolTemplate,
    inputs: &Inputs,
    problems: &[Diagnostic],
    from: ValuesFrom,
) {
    print_problems(name, text, problems);
    if from == ValuesFrom::Arguments {
        eprintln!(
            "hint: the arguments are a JSON object keyed by the parameters' names; `llmtool export {name} --to json-schema` shows them"
        );
        return;
    }
    if problems.iter().any(|p| p.code() == "LT602") {
        eprintln!("hint: give a value with `--var NAME=VALUE`, or several with `--vars FILE.json`");
    }
    for variable in template.variables() {
        let Some(input) = inputs.get(&variable.name) else { continue };
        // The core's reading of a joined value, said with this front end's flag.
        let joined = input.items.iter().find_map(|item| variable.joined_values(item));
        if let Some(joined) = joined {
            let repeated: Vec<String> = joined
                .iter()
                .map(|item| shell_word(&format!("{}={item}", variable.name)))
                .map(|pair| format!("--var {pair}"))
                .collect();
            eprintln!(
                "hint: `{}` is a multi-select: repeat `--var` for each item: {}",
                variable.name,
                repeated.join(" ")
            );
        }
    }
}

/// The parameters as JSON, each number as the file wrote it: `1200` an integer (as an API
/// takes `max_tokens`), `0.7` a float.
fn parameters_json(parameters: &llmtool_format::model::Parameters) -> serde_json::Value {
    let mut json = serde_json::to_value(parameters).unwrap_or_default();
    for (name, parameter) in parameters.known() {
        if let Ok(whole) = parameter.raw.trim().parse::<i64>() {
            json[name] = serde_json::json!(whole);
        }
    }
    json
}

/// `word` as a shell reads it back: as it is when it is plain, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "=_.,-/:@".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

pub(crate) fn print_problems(name: &str, text: &str, problems: &[Diagnostic]) {
    let source = Source::new(name, text);
    eprint!("{}", report::human(&source, problems, io::color_for(std::io::stderr().is_terminal())));
}

fn value_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Text(text) => serde_json::Value::String(text.clone()),
        Value::List(items) => items.iter().cloned().map(serde_json::Value::String).collect(),
    }
}
