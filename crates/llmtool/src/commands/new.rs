//! `llmtool new`: a valid, canonical starter tool, from flags or questions on a terminal.

mod args;

pub(crate) use args::NewArgs;

use std::fmt::Write as _;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use llmtool_format::format;
use serde_json::{Value, json};

use crate::outcome::Outcome;

use crate::io;

pub(crate) fn run(args: &NewArgs) -> anyhow::Result<Outcome> {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let name = match &args.name {
        Some(name) => name.clone(),
        None if interactive => ask("Tool name", "My Tool")?,
        None => "My Tool".to_owned(),
    };
    let description = match &args.description {
        Some(description) => description.clone(),
        None if interactive => {
            ask("What does it do, in a sentence", &format!("{name}: describe what it does."))?
        }
        None => format!("{name}: describe what the tool does here."),
    };
    let variables = variables(args)?;
    let now =
        jiff::Timestamp::now().round(jiff::Unit::Second).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let tool = if args.smart {
        smart_tool(&name, &description, &variables, &now.to_string())
    } else {
        prompt_tool(args, &name, &description, &variables, &now.to_string())
    };
    write_tool(args, &name, &tool)
}

/// A prompt tool: a prompt that uses every variable.
fn prompt_tool(
    args: &NewArgs,
    name: &str,
    description: &str,
    variables: &[Value],
    now: &str,
) -> Value {
    let prompt = args.prompt.clone().unwrap_or_else(|| default_prompt(name, variables));
    json!({
        "version": "1.0.0",
        "model_prompt": prompt,
        "metadata": {
            "prompt_name": name,
            "description": description,
            "usage_notes": "Fill in the variables, then run or render the tool.",
            "model_version": ["gpt-4o-mini", "claude-sonnet-4"],
            "parameters": { "temperature": 0.7, "max_tokens": 1024 },
            "variables": variables,
            "expected_output": { "type": "text" },
            "timestamp": now,
        }
    })
}

/// A smart tool, in the smart tools' format: an `execute` that reads every variable, asks the
/// model with `llm()`, and returns the answer.
fn smart_tool(name: &str, description: &str, variables: &[Value], now: &str) -> Value {
    let names: Vec<&str> = variables.iter().filter_map(|v| v["name"].as_str()).collect();
    let mut code = String::from("def execute(variables):\n");
    for var in &names {
        let _ = writeln!(code, "    {} = variables[{var:?}]", python_name(var));
    }
    let listed: Vec<String> = names.iter().map(|var| format!("{{{}}}", python_name(var))).collect();
    // The name as literal text of a Python f-string.
    let literal = name
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('{', "{{")
        .replace('}', "}}")
        .replace('\n', " ");
    let _ = writeln!(
        code,
        "    answer = llm(f\"{literal}: {}\")\n    return answer",
        if listed.is_empty() { "say hello".to_owned() } else { listed.join(", ") }
    );
    // The smart tools' variables have a name, a description and a default.
    let variables: Vec<Value> = variables
        .iter()
        .map(|v| {
            let mut v = v.clone();
            if v["type"] == "text"
                && let Some(object) = v.as_object_mut()
            {
                object.remove("type");
            }
            v
        })
        .collect();
    json!({
        "version": "1.0.0",
        "metadata": {
            "tool_name": name,
            "tool_code": code,
            "description": description,
            "usage_notes": "Fill in the variables, then run the tool (`llmtool run`).",
            "model_version": ["gpt-4o-mini", "claude-sonnet-4"],
            "variables": variables,
            "expected_output": "text",
            "timestamp": now,
            "requirements": [],
        }
    })
}

/// A Python identifier for a variable's name (`due date` becomes `due_date`).
fn python_name(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if PYTHON_KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Python's reserved words, which cannot name a variable.
const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Writes `tool` in its canonical form where `--output` says (or a file named after it).
fn write_tool(args: &NewArgs, name: &str, tool: &Value) -> anyhow::Result<Outcome> {
    let text = format::format_source(&serde_json::to_string(tool)?, false)
        .map_err(|e| anyhow::anyhow!("internal error: the starter tool is not formattable: {e}"))?
        .text;
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.json", llmtool_registry::slug_of(name))));
    // A `--prompt` with a typo in a placeholder is said now, not when the model gets it.
    let shown =
        if io::is_stdin(&path) { "the new tool".to_owned() } else { path.display().to_string() };
    super::render::say_literal_placeholders(
        &shown,
        &llmtool_format::Document::from_text(text.clone()),
    );
    if io::is_stdin(&path) {
        io::write_stdout(text.as_bytes())?;
        return Ok(Outcome::Ok);
    }
    if path.exists() && !args.force {
        bail!("`{}` exists; pass `--force` to overwrite it", path.display());
    }
    std::fs::write(&path, &text).with_context(|| format!("cannot write `{}`", path.display()))?;
    eprintln!("wrote {}; try `llmtool show {}`", path.display(), path.display());
    Ok(Outcome::Ok)
}

fn variables(args: &NewArgs) -> anyhow::Result<Vec<Value>> {
    let mut out = Vec::new();
    for name in &args.text_vars {
        out.push(json!({ "name": name, "type": "text", "description": format!("The {name} to work with.") }));
    }
    for (flag, kind, specs) in
        [("--select", "single-select", &args.selects), ("--multi", "multi-select", &args.multis)]
    {
        for spec in specs {
            let (name, choices) = spec
                .split_once('=')
                .with_context(|| format!("`{flag} {spec}` must be written `NAME=A,B,...`"))?;
            let choices: Vec<&str> =
                choices.split(',').map(str::trim).filter(|c| !c.is_empty()).collect();
            if choices.is_empty() {
                bail!("`{flag} {spec}` lists no choices");
            }
            let default =
                if kind == "single-select" { json!(choices[0]) } else { json!([choices[0]]) };
            out.push(json!({
                "name": name.trim(),
                "type": kind,
                "description": format!("Which {} to use.", name.trim()),
                "default": default,
                "allowed_values": choices,
            }));
        }
    }
    Ok(out)
}

fn default_prompt(name: &str, variables: &[Value]) -> String {
    let mut prompt = format!("You are {name}, a helpful assistant.");
    for variable in variables {
        if let Some(var) = variable["name"].as_str() {
            let _ = write!(prompt, "\n{var}: {{{{{var}}}}}");
        }
    }
    prompt
}

fn ask(question: &str, default: &str) -> anyhow::Result<String> {
    eprint!("{question} [{default}]: ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let answer = line.trim();
    Ok(if answer.is_empty() { default.to_owned() } else { answer.to_owned() })
}
