//! Values read from documents: `--var NAME=@FILE`, and `"@FILE"` in a `--vars` file, put the
//! document's text into the variable (PDF, DOCX, ODT, HTML, Markdown or text: see
//! `llmtool_documents`). A value that is to start with `@` itself is written `@@`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context as _;
use llmtool_documents::{Limits, Written};

/// The value `given` stands for: the text of the document it names after `@`, or itself
/// (`@@…` is `@…`). Named on the command line (`folder` is `None`), the path is any path;
/// named in a `--vars` file, it must lie inside that file's `folder`.
pub(crate) fn value<'a>(
    name: &str,
    given: &'a str,
    folder: Option<&Path>,
) -> anyhow::Result<Cow<'a, str>> {
    let path = match llmtool_documents::written(given, folder) {
        Ok(Written::Value(value)) => return Ok(Cow::Borrowed(value)),
        Ok(Written::Document(path)) => path,
        Err(problem) => anyhow::bail!("`{name}`: {problem}"),
    };
    let extracted = llmtool_documents::read(&path, &Limits::default())
        .with_context(|| format!("`{name}` cannot take the text of `{}`", path.display()))?;
    let pages = extracted.pages.map(|n| format!(", {n} page{}", if n == 1 { "" } else { "s" }));
    eprintln!(
        "note: `{name}` is the text of {} ({}{}, {} characters)",
        path.display(),
        extracted.kind,
        pages.unwrap_or_default(),
        extracted.text.chars().count()
    );
    if let Ok(mut read) = READ.lock() {
        read.push((name.to_owned(), path, extracted.text.chars().count()));
    }
    Ok(Cow::Owned(extracted.text))
}

/// The documents this command read: each value's name, its file and its length in characters.
static READ: Mutex<Vec<(String, PathBuf, usize)>> = Mutex::new(Vec::new());

/// When a prompt is over the model's context window: which document takes most of it.
pub(crate) fn over_window_hint() -> Option<String> {
    let read = READ.lock().ok()?;
    let (name, path, characters) = read.iter().max_by_key(|(_, _, characters)| *characters)?;
    let tokens = characters.div_ceil(llmtool_providers::run::CHARACTERS_PER_TOKEN);
    Some(format!(
        "hint: `{name}` holds the text of {} (about {tokens} tokens): give a shorter document or a part of it, or choose a model with a larger window (`--model`)",
        path.display()
    ))
}

/// The values of a `--vars` file's JSON `object` with each `"@FILE"` string (alone, or an item
/// of an array) replaced by the document's text; paths are inside the file's folder.
pub(crate) fn in_json(object: &mut serde_json::Value, folder: &Path) -> anyhow::Result<()> {
    let Some(object) = object.as_object_mut() else { return Ok(()) };
    for (name, value) in object.iter_mut() {
        let strings: Vec<&mut serde_json::Value> = match value {
            serde_json::Value::Array(items) => items.iter_mut().collect(),
            other => vec![other],
        };
        for slot in strings {
            let Some(given) = slot.as_str() else { continue };
            // A document's text, or `@@…` read as `@…`: the same rule as on the command line.
            let replaced = match self::value(name, given, Some(folder))? {
                Cow::Owned(text) => Some(text),
                Cow::Borrowed(value) if value.len() != given.len() => Some(value.to_owned()),
                Cow::Borrowed(_) => None,
            };
            if let Some(text) = replaced {
                *slot = serde_json::Value::String(text);
            }
        }
    }
    Ok(())
}

/// Whether `error` is a document that cannot give a value (its fault, not the machine's):
/// the run then ends with status 1, as for any input with problems.
pub(crate) fn is_unreadable_document(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<llmtool_documents::DocumentError>()
        .is_some_and(llmtool_documents::DocumentError::is_in_the_document)
}

/// Keeps a panic inside the PDF or the Parquet reader off the terminal: `llmtool_documents`
/// reads a PDF, and `llmtool_batch` a Parquet dataset, on a thread of its own, and turns such a
/// panic into that file's error, which is what the user then sees.
pub(crate) fn quiet_reader_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let readers = [llmtool_documents::PDF_THREAD, llmtool_batch::PARQUET_THREAD];
        if !std::thread::current().name().is_some_and(|name| readers.contains(&name)) {
            default(info);
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `@@` starts a value with `@` in a `--vars` file as on the command line; a lone value
    /// and the items of a list alike.
    #[test]
    fn a_doubled_at_sign_is_one_in_a_vars_file_too() {
        let folder = tempfile::tempdir().unwrap();
        let mut object = serde_json::json!({
            "handle": "@@llmtool",
            "tags": ["@@one", "two"],
            "plain": "no at sign",
        });
        in_json(&mut object, folder.path()).unwrap();
        assert_eq!(
            object,
            serde_json::json!({"handle": "@llmtool", "tags": ["@one", "two"], "plain": "no at sign"})
        );
        assert_eq!(value("handle", "@@llmtool", None).unwrap(), "@llmtool");
    }
}
