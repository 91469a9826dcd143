//! `llmtool show`: a readable summary of a tool.

mod args;

pub(crate) use args::ShowArgs;

use std::fmt::Write as _;

use comfy_table::{ContentArrangement, Table, presets};
use llmtool_format::image;
use llmtool_format::model::{Avatar, Metadata, Spanned, Tool, Version};
use llmtool_format::template::{ToolTemplate, Value};

use crate::outcome::Outcome;

use crate::io;

pub(crate) fn run(args: &ShowArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.tool);
    let Some((document, template)) = super::render::load_tool(&args.tool, &name)? else {
        return Ok(Outcome::Problems);
    };
    let Some(tool) = &document.tool else { return Ok(Outcome::Problems) };
    io::write_stdout(summary(tool, &template).as_bytes())?;
    Ok(Outcome::Ok)
}

/// The whole summary text.
fn summary(tool: &Tool, template: &ToolTemplate) -> String {
    let mut out = String::new();
    let meta = tool.metadata.clone().unwrap_or_default();
    let title = tool.name().unwrap_or("(unnamed tool)");
    let _ = write!(out, "{title}");
    if let Some(version) = &tool.version {
        match &version.value {
            Version::Text(v) => {
                let _ = write!(out, "  (version {v})");
            }
            Version::Integer(v) => {
                let _ = write!(out, "  (version {v})");
            }
        }
    }
    out.push('\n');
    if let Some(description) = &meta.description {
        let _ = writeln!(out, "{}", description.value);
    }
    out.push('\n');
    facts(&mut out, &meta, &tool.models());
    if let Some(code) = tool.code() {
        let _ = writeln!(
            out,
            "{:<18}smart tool: `llmtool run` runs its Python in the sandbox",
            "Kind:"
        );
        let requirements: Vec<&str> = tool.requirements().iter().map(Spanned::as_str).collect();
        if !requirements.is_empty() {
            let _ = writeln!(out, "{:<18}{}", "Requirements:", requirements.join(", "));
        }
        variables(&mut out, template, tool.declares_variables());
        parameters(&mut out, &meta);
        // The code last, whole and indented, as it runs.
        let _ = writeln!(out, "\nCode (Python)");
        for line in code.value.lines() {
            let _ = writeln!(out, "  {line}");
        }
        return out;
    }
    variables(&mut out, template, tool.declares_variables());
    parameters(&mut out, &meta);
    // The prompt last, whole and indented, as the model is sent it (placeholders unfilled).
    let _ = writeln!(out, "\nPrompt");
    for line in tool.prompt().lines() {
        let _ = writeln!(out, "  {line}");
    }
    out
}

fn facts(out: &mut String, meta: &Metadata, models: &[&str]) {
    let mut line = |label: &str, value: String| {
        let _ = writeln!(out, "{:<18}{value}", format!("{label}:"));
    };
    if let Some(notes) = &meta.usage_notes {
        line("Usage notes", notes.value.clone());
    }
    if !models.is_empty() {
        line("Models", models.join(", "));
    }
    if let Some(creator) = &meta.creator {
        let mut who = creator.name.as_ref().map_or(String::new(), |n| n.value.clone());
        if let Some(email) = &creator.email {
            let _ = write!(who, " <{}>", email.value);
        }
        if let Some(org) = &creator.organization {
            let _ = write!(who, ", {}", org.value);
        }
        line("Creator", who.trim().to_owned());
    }
    if let Some(timestamp) = &meta.timestamp {
        line("Updated", timestamp.value.clone());
    }
    if let Some(output) = &meta.expected_output {
        let mut text = output.kind.as_ref().map_or("text".to_owned(), |k| k.value.clone());
        for (label, value) in [("format", &output.format), ("language", &output.language)] {
            if let Some(value) = value {
                let _ = write!(text, ", {label} {}", value.value);
            }
        }
        if let Some(values) = &output.allowed_values {
            let joined: Vec<&str> = values.value.iter().map(|v| v.value.as_str()).collect();
            let _ = write!(text, ": one of {}", joined.join(", "));
        }
        line("Expected output", text);
    }
    if let Some(avatar) = &meta.avatar {
        line("Avatar", describe_avatar(avatar));
    }
}

fn describe_avatar(avatar: &Avatar) -> String {
    let kind = avatar.kind.as_ref().map_or("", |k| k.as_str());
    let Some(data) = &avatar.data else { return format!("{kind} (no data)") };
    if kind == "url" && !data.value.starts_with("data:") {
        return format!("url {}", data.value);
    }
    match image::decode_base64(&data.value).and_then(|bytes| image::sniff(&bytes)) {
        Ok(info) => {
            let size = info.size.map_or("unknown size".to_owned(), |(w, h)| format!("{w}x{h}"));
            format!(
                "embedded {} image, {size}, {:.1} KiB",
                info.format.name(),
                info.bytes as f64 / 1024.0
            )
        }
        Err(error) => format!("{kind}: not an image ({error})"),
    }
}

fn variables(out: &mut String, template: &ToolTemplate, declared: bool) {
    out.push('\n');
    if template.variables().is_empty() {
        out.push_str("Variables: none\n");
        return;
    }
    out.push_str(if declared {
        "Variables\n"
    } else {
        "Variables (implicit: every {{name}} is required text)\n"
    });
    let mut table = new_table(["name", "type", "default", "allowed values", "description"]);
    for variable in template.variables() {
        let default = match &variable.default {
            None => "(required)".to_owned(),
            Some(Value::Text(text)) => text.clone(),
            Some(Value::List(items)) => items.join(", "),
        };
        table.add_row([
            variable.name.clone(),
            variable.kind.to_string(),
            default,
            variable.allowed_values.join(", "),
            variable.description.clone().unwrap_or_default(),
        ]);
    }
    let _ = writeln!(out, "{table}");
}

fn parameters(out: &mut String, meta: &Metadata) {
    let Some(params) = &meta.parameters else { return };
    out.push_str("\nParameters\n");
    let mut table = new_table(["name", "value"]);
    for (name, param) in params.known() {
        table.add_row([name.to_owned(), param.raw.clone()]);
    }
    for (name, value) in &params.other {
        table.add_row([name.clone(), value.to_string()]);
    }
    let _ = writeln!(out, "{table}");
}

fn new_table<const N: usize>(header: [&str; N]) -> Table {
    let mut table = Table::new();
    table
        .load_style(presets::ASCII_BORDERS_ONLY_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(110)
        .set_header(header);
    table
}
