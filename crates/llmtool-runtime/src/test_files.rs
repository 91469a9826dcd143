//! Test files on disk (`NAME.tests.json` or `.yaml`): read, bounded in size, with their tool
//! (named in the file, or `NAME.json` beside it) loaded and every problem of both found.

use std::path::{Path, PathBuf};

use llmtool_format::model::Tool;
use llmtool_format::report::{Source, human};
use llmtool_format::suite::{self, TestFile, codes::TEST_TOOL_MISSING};
use llmtool_format::{Diagnostic, Severity, Span};

use llmtool_registry::Reference;

use crate::files::{FileError, LibraryClient, ToolFile, read};

/// A test file read and checked, with its tool.
#[derive(Debug, Clone)]
pub struct TestsFile {
    /// The name reports show.
    pub name: String,
    pub text: String,
    /// What could be read of it.
    pub file: Option<TestFile>,
    /// Its tool's path, and the tool when it has no error.
    pub tool_path: Option<PathBuf>,
    pub tool: Option<Tool>,
    /// What to say before the tests run: that a library's tool comes from the cache.
    pub note: Option<String>,
    /// Every problem: of the file, of its tool (as one diagnostic), and of its cases against
    /// the tool.
    pub diagnostics: Vec<Diagnostic>,
}

impl TestsFile {
    /// Reads the test file at `path`, and its tool, each at most `limit` bytes. The tool is
    /// the file it names beside it, or the library's tool a `registry:` name names (pulled
    /// from `library`).
    pub fn load(
        path: &Path,
        limit: u64,
        library: Option<&LibraryClient>,
    ) -> Result<Self, FileError> {
        let bytes = read(path, limit)?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let name = path.display().to_string();
        let yaml = !name.to_ascii_lowercase().ends_with(".json");
        let read = if yaml { suite::read_yaml(&text) } else { suite::read_json(&text) };
        let mut diagnostics = read.diagnostics;
        let (mut tool_path, mut tool, mut note) = (None, None, None);
        if let Some(file) = &read.file {
            let folder = path.parent().unwrap_or(Path::new(""));
            let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let named =
                file.tool.clone().or_else(|| file_name.and_then(|n| suite::default_tool_name(&n)));
            let at = tool_span(&text, file.tool.as_deref());
            let beside = |named: String| match Reference::from_path(&named) {
                Some(_) => PathBuf::from(named),
                None => folder.join(named),
            };
            match named.map(beside) {
                None => diagnostics.push(
                    Diagnostic::new(&TEST_TOOL_MISSING, "the test file names no tool").at(at),
                ),
                Some(found) => {
                    let opened = ToolFile::open(&found, limit, library).map(|loaded| {
                        note.clone_from(&loaded.note);
                        loaded.into_tool()
                    });
                    match opened {
                        Err(error) => diagnostics
                            .push(Diagnostic::new(&TEST_TOOL_MISSING, error.to_string()).at(at)),
                        Ok(loaded) => match loaded {
                            Ok(loaded) => {
                                diagnostics.extend(suite::check_against(file, &loaded));
                                tool = Some(loaded);
                            }
                            Err(errors) => diagnostics.push(
                                Diagnostic::new(
                                    &TEST_TOOL_MISSING,
                                    format!(
                                        "its tool `{}` has errors (`llmtool check` it)",
                                        found.display()
                                    ),
                                )
                                .at(at)
                                .with_help(
                                    errors
                                        .errors
                                        .first()
                                        .map(|e| e.message.clone())
                                        .unwrap_or_default(),
                                ),
                            ),
                        },
                    }
                    tool_path = Some(found);
                }
            }
        }
        llmtool_format::diagnostic::sort(&mut diagnostics);
        Ok(TestsFile { name, text, file: read.file, tool_path, tool, note, diagnostics })
    }

    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }

    /// `diagnostics` of this file as `llmtool check` shows them.
    pub fn report(&self, diagnostics: &[Diagnostic], color: bool) -> String {
        human(&Source::new(&self.name, &self.text), diagnostics, color)
    }
}

/// Where the tool is named in the file (its `"tool"` value), else the file's start.
fn tool_span(text: &str, tool: Option<&str>) -> Span {
    tool.and_then(|tool| text.find(tool).map(|start| Span::new(start, start + tool.len())))
        .unwrap_or(Span::empty(0))
}
