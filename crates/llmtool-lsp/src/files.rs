//! The files the editor has open: their text as edited, checked again after every change.

use std::collections::HashMap;

use globset::GlobSet;
use llmtool_format::Document;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};

use crate::positions::{Encoding, Lines};

/// One open file and what the checker made of it.
#[derive(Debug)]
pub struct OpenFile {
    pub version: i32,
    /// The checked text (`document.text` is the file as the editor has it).
    pub document: Document,
    pub lines: Lines,
    /// Whether this is a tool file: it ends `.llmtool.json`, matches a configured glob, or is
    /// JSON with `model_prompt` (or a smart tool's `tool_code`). Other files get no diagnostics
    /// or features.
    pub is_tool: bool,
}

impl OpenFile {
    pub fn text(&self) -> &str {
        &self.document.text
    }
}

/// Every open file, by URI.
#[derive(Debug, Default)]
pub struct Files {
    open: HashMap<Uri, OpenFile>,
    /// Globs from the client's `initializationOptions.globs`.
    globs: GlobSet,
    encoding: Option<Encoding>,
}

impl Files {
    pub fn configure(&mut self, encoding: Encoding, globs: GlobSet) {
        self.encoding = Some(encoding);
        self.globs = globs;
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding.unwrap_or(Encoding::Utf16)
    }

    pub fn get(&self, uri: &Uri) -> Option<&OpenFile> {
        self.open.get(uri)
    }

    /// A tool file that is open, for the features that only make sense on one.
    pub fn tool(&self, uri: &Uri) -> Option<&OpenFile> {
        self.open.get(uri).filter(|file| file.is_tool)
    }

    pub fn open(&mut self, uri: &Uri, version: i32, text: String) -> &OpenFile {
        let file = self.check(uri, version, text);
        self.open.insert(uri.clone(), file);
        &self.open[uri]
    }

    /// Applies the editor's changes in order (each range is in the text as the changes before
    /// it left it) and checks the result; `None` for a file that is not open.
    pub fn change(
        &mut self,
        uri: &Uri,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> Option<&OpenFile> {
        let file = self.open.remove(uri)?;
        let encoding = self.encoding();
        let mut text = file.document.text;
        let mut lines = file.lines;
        // Line starts are found again only when a later change needs them (the check below
        // finds them for the result), as it takes a pass over the whole text.
        let mut stale = false;
        for change in changes {
            match change.range {
                Some(range) => {
                    if stale {
                        lines = Lines::new(&text, encoding);
                    }
                    let span = lines.span(&text, range);
                    text.replace_range(span.range(), &change.text);
                }
                None => text = change.text,
            }
            stale = true;
        }
        let file = self.check(uri, version, text);
        self.open.insert(uri.clone(), file);
        self.open.get(uri)
    }

    pub fn close(&mut self, uri: &Uri) {
        self.open.remove(uri);
    }

    fn check(&self, uri: &Uri, version: i32, text: String) -> OpenFile {
        let lines = Lines::new(&text, self.encoding());
        let document = Document::from_text(text);
        let path = uri.path().as_str();
        let named = path.ends_with(".llmtool.json") || self.globs.is_match(path);
        // A prompt tool's `model_prompt`, or a smart tool's `tool_code` (in either place).
        let has_prompt =
            document.tool.as_ref().is_some_and(|t| t.model_prompt.is_some() || t.code().is_some());
        OpenFile { version, document, lines, is_tool: named || has_prompt }
    }
}
