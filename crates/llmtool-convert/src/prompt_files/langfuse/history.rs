//! A library's versions of tools as Langfuse's export (a JSON list of prompt objects, one per
//! version), so that a history leaves a library the way `publish --from langfuse` brings one
//! in: each version under its prompt's one name, with its number, labels, tags and note.

use serde_json::{Value, json};

use super::super::ToolSource;
use crate::function::Converted;
use llmtool_format::document::Document;

/// Langfuse's label for a prompt's newest version, which its export always carries.
const LATEST: &str = "latest";

/// One version of a tool, as a library keeps it.
#[derive(Debug, Clone, Copy)]
pub struct LibraryVersion<'a> {
    /// The prompt's name in Langfuse (the tool's slug): all its versions share it.
    pub name: &'a str,
    pub version: u32,
    /// The version's tool file.
    pub tool: &'a str,
    /// The library's labels on this version.
    pub labels: &'a [String],
    /// The tool's tags.
    pub tags: &'a [String],
    /// The note the version was published with: Langfuse's commit message.
    pub note: Option<&'a str>,
}

/// `versions` (several prompts, each one's versions oldest first) as Langfuse's export: each
/// version written as `--to langfuse` writes a tool, named `name` (a tool name that differs
/// is kept in `config.llmtool`), with the library's number, labels (and `latest` on each
/// prompt's newest), tags and note. What the writing says is named by prompt and version, and
/// placed nowhere (it is about the tool files, not this text).
pub fn export(versions: &[LibraryVersion<'_>]) -> Converted<String> {
    let mut diagnostics = Vec::new();
    let mut objects = Vec::new();
    for (index, version) in versions.iter().enumerate() {
        let newest = versions[index + 1..].iter().all(|later| later.name != version.name);
        let document = Document::from_text(version.tool.to_owned());
        let Some(source) = ToolSource::new(&document) else {
            let mut problem = *super::invalid(format!(
                "`{}` v{}: the library's tool file does not read as a tool; left out",
                version.name, version.version
            ));
            problem.severity = llmtool_format::diagnostic::Severity::Warning;
            diagnostics.push(problem);
            continue;
        };
        let written = super::write(&source);
        for mut said in written.diagnostics {
            said.message = format!("`{}` v{}: {}", version.name, version.version, said.message);
            said.primary = None;
            said.secondary.clear();
            said.fix = None;
            diagnostics.push(said);
        }
        let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(&written.value) else {
            continue;
        };
        let tool_name = object.insert("name".into(), json!(version.name));
        if let Some(tool_name) = tool_name.filter(|tool_name| tool_name != version.name) {
            keep_tool_name(&mut object, tool_name);
        }
        let mut labels: Vec<&str> = version.labels.iter().map(String::as_str).collect();
        if newest && !labels.contains(&LATEST) {
            labels.push(LATEST);
        }
        object.insert("version".into(), json!(version.version));
        object.insert("labels".into(), json!(labels));
        object.insert("tags".into(), json!(version.tags));
        object.insert("commitMessage".into(), json!(version.note));
        objects.push(Value::Object(object));
    }
    let text = serde_json::to_string_pretty(&Value::Array(objects)).unwrap_or_default() + "\n";
    Converted { value: text, diagnostics }
}

/// Keeps the tool's own name (`prompt_name`) in `config.llmtool`, where an import finds it.
fn keep_tool_name(object: &mut serde_json::Map<String, Value>, tool_name: Value) {
    let config = object.entry("config").or_insert_with(|| json!({}));
    let Some(config) = config.as_object_mut() else { return };
    let own = config.entry(super::OWN).or_insert_with(|| json!({}));
    let Some(own) = own.as_object_mut() else { return };
    let metadata = own.entry("metadata").or_insert_with(|| json!({}));
    if let Some(metadata) = metadata.as_object_mut() {
        metadata.insert("prompt_name".into(), tool_name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, prompt: &str) -> String {
        json!({"model_prompt": prompt, "metadata": {"prompt_name": name}}).to_string()
    }

    #[test]
    fn each_version_carries_its_number_labels_and_latest_on_the_newest() {
        let (first, second) = (tool("Echo", "A {{x}}"), tool("Echo back", "B {{x}}"));
        let production = vec!["production".to_owned()];
        let tags = vec!["demo".to_owned()];
        let version = |version, tool, labels, note| LibraryVersion {
            name: "echo",
            version,
            tool,
            labels,
            tags: &tags,
            note,
        };
        let written =
            export(&[version(1, &first, &production, None), version(2, &second, &[], Some("b"))]);
        assert!(written.diagnostics.is_empty(), "{:?}", written.diagnostics);
        let list: Value = serde_json::from_str(&written.value).unwrap();
        assert_eq!(list[0]["name"], "echo");
        assert_eq!(list[0]["labels"], json!(["production"]));
        assert_eq!(list[1]["labels"], json!(["latest"]));
        assert_eq!(list[1]["commitMessage"], "b");
        assert_eq!(list[1]["tags"], json!(["demo"]));
        // The tool's own name comes back on import.
        assert_eq!(list[1]["config"]["llmtool"]["metadata"]["prompt_name"], "Echo back");
        let back = super::super::versions(&written.value).unwrap();
        let back: Value = serde_json::from_str(&back[1].tool.as_ref().unwrap().value).unwrap();
        assert_eq!(back["metadata"]["prompt_name"], "Echo back");
        assert_eq!(back["model_prompt"], "B {{x}}");
    }
}
