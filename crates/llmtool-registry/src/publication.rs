//! A tool file made ready to publish: checked in full (errors refuse it, with the diagnostics
//! `check --format json` prints), put in canonical form, hashed, and the fields the library
//! searches and filters by read out of it.

use llmtool_format::Document;
use llmtool_format::diagnostic::{Diagnostic, Severity};
use llmtool_format::format::canonical_text;
use llmtool_format::report::{Source, json_records};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// The longest slug.
const MAX_SLUG: usize = 64;

/// A checked tool file, in the form the library keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publication {
    /// The canonical text.
    pub text: String,
    /// SHA-256 of `text`, in hex.
    pub content_hash: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub usage_notes: Option<String>,
    pub prompt: String,
    /// The types of its variables, each once, in the format's names.
    pub variable_types: Vec<String>,
    pub output_type: Option<String>,
    pub models: Vec<String>,
    /// The name in `metadata.creator`.
    pub creator: Option<String>,
    /// Whether it carries a picture (a base64 avatar).
    pub has_avatar: bool,
    /// Whether it is a smart tool (it has `tool_code`).
    pub smart: bool,
    /// The version the publisher edited: when set, the publish is refused
    /// ([`crate::StoreError::Conflict`]) if another version has become the latest since.
    pub base: Option<u32>,
    /// The tags a new tool starts with (none: `all`, every member's); an existing tool keeps
    /// its own.
    pub tags: Vec<String>,
}

/// Why a tool file is not published: `check`'s errors, as `check --format json` gives them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the tool file has {} error(s)", .diagnostics.iter().filter(|d| d["severity"] == "error").count() + .omitted_errors)]
pub struct Rejection {
    /// At most [`MAX_DIAGNOSTICS`] of them.
    pub diagnostics: Vec<Value>,
    /// The errors past the cap, counted in the message.
    pub omitted_errors: usize,
}

/// The most diagnostics one answer of the library carries: a file of tens of thousands of
/// problems (23,000 unused variables, say) would otherwise make an answer of megabytes.
pub const MAX_DIAGNOSTICS: usize = 1000;

/// The diagnostics of `document` (shown as read from `path`) as `check --format json` prints
/// them: at most [`MAX_DIAGNOSTICS`], errors first, in the file's order; and how many were
/// left out.
pub fn diagnostics_json(document: &Document, path: &str) -> (Vec<Value>, usize) {
    let all = &document.diagnostics;
    let kept: Vec<Diagnostic> = if all.len() <= MAX_DIAGNOSTICS {
        all.clone()
    } else {
        let errors = all.iter().filter(|d| d.severity == Severity::Error);
        let others = all.iter().filter(|d| d.severity != Severity::Error);
        let mut kept: Vec<Diagnostic> =
            errors.chain(others).take(MAX_DIAGNOSTICS).cloned().collect();
        llmtool_format::diagnostic::sort(&mut kept);
        kept
    };
    let source = Source::new(path, &document.text);
    let records = json_records(&source, &kept)
        .iter()
        .filter_map(|record| serde_json::to_value(record).ok())
        .collect();
    (records, all.len() - kept.len())
}

/// The content hash of a tool file's canonical text: its SHA-256, in hex. A version's
/// identity: what `pull` checks a received tool against.
pub fn content_hash(canonical: &str) -> String {
    hex::encode(Sha256::digest(canonical.as_bytes()))
}

impl Publication {
    /// Checks `text` (shown as `path` in diagnostics) and makes it ready to publish.
    pub fn from_text(text: &str, path: &str) -> Result<Publication, Rejection> {
        let document = Document::from_text(text.to_owned());
        let rejected = || {
            let (diagnostics, _) = diagnostics_json(&document, path);
            let shown = diagnostics.iter().filter(|d| d["severity"] == "error").count();
            Rejection { diagnostics, omitted_errors: document.summary().errors - shown }
        };
        if document.summary().errors > 0 {
            return Err(rejected());
        }
        let (Some(tool), Some(canonical)) = (&document.tool, canonical_text(&document)) else {
            return Err(rejected());
        };
        let metadata = tool.metadata.as_ref();
        let text_of =
            |field: Option<&llmtool_format::model::Spanned<String>>| field.map(|f| f.value.clone());
        let mut variable_types: Vec<String> = metadata
            .and_then(|m| m.variables.as_ref())
            .map(|v| v.value.iter().map(|v| v.kind().as_str().to_owned()).collect())
            .unwrap_or_default();
        variable_types.sort();
        variable_types.dedup();
        let output = metadata.and_then(|m| m.expected_output.as_ref());
        Ok(Publication {
            content_hash: content_hash(&canonical),
            text: canonical,
            name: tool.name().map(str::to_owned),
            description: text_of(metadata.and_then(|m| m.description.as_ref())),
            usage_notes: text_of(metadata.and_then(|m| m.usage_notes.as_ref())),
            prompt: tool.prompt().to_owned(),
            variable_types,
            output_type: output.and_then(|o| o.kind.as_ref()).map(|k| k.value.clone()),
            models: tool.models().into_iter().map(str::to_owned).collect(),
            creator: text_of(metadata.and_then(|m| m.creator.as_ref()?.name.as_ref())),
            has_avatar: metadata.and_then(|m| m.avatar.as_ref()).is_some_and(is_picture),
            smart: tool.kind() == llmtool_format::model::ToolKind::Smart,
            base: None,
            tags: Vec::new(),
        })
    }

    /// The same publication, whose tool, if it is new, starts with `tags` (the team-private
    /// rule: `all` too only when none of them is a team's, or `all` is among them).
    #[must_use]
    pub fn tagged(mut self, tags: Vec<String>) -> Publication {
        self.tags = tags;
        self
    }

    /// The same publication, refused if `base` is no longer the latest version when it lands.
    #[must_use]
    pub fn on_top_of(mut self, base: Option<u32>) -> Publication {
        self.base = base;
        self
    }

    /// The slug a tool is published under when none is given: its name's.
    pub fn default_slug(&self) -> String {
        slug_of(self.name.as_deref().unwrap_or("tool"))
    }
}

/// Whether `avatar` is a picture carried in the file: its type says base64, or it is a
/// `data:` URL of base64 (as the migration that filled in older versions decided).
fn is_picture(avatar: &llmtool_format::model::Avatar) -> bool {
    let data = avatar.data.as_ref().map_or("", |data| data.value.as_str());
    avatar.kind.as_ref().is_some_and(|kind| kind.value.eq_ignore_ascii_case("base64"))
        || data.strip_prefix("data:").is_some_and(|rest| rest.contains(";base64,"))
}

/// `text` as a slug: lowercase ASCII letters and digits in words joined by `-`, at most 64
/// characters (`Teach Me Anything` is `teach-me-anything`).
pub fn slug_of(text: &str) -> String {
    llmtool_format::naming::slug(text, MAX_SLUG).replace('_', "-")
}

/// Whether `slug` is one the library takes: as [`slug_of`] makes them.
pub fn is_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug.len() <= MAX_SLUG
        && slug.starts_with(|c: char| c.is_ascii_lowercase())
        && slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.ends_with('-')
        && !slug.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_kebab_case_ascii() {
        assert_eq!(slug_of("Teach Me Anything"), "teach-me-anything");
        assert_eq!(slug_of("Résumé de texte"), "resume-de-texte");
        assert!(is_slug("teach-me-anything") && is_slug(&slug_of("이메일 답장")));
        assert!(!is_slug("Teach") && !is_slug("a--b") && !is_slug("-a") && !is_slug("1a"));
    }
}
