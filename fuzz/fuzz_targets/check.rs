//! Fuzz target: any bytes through the whole pipeline — decode, parse, lower, every rule, every
//! renderer, `fmt --fix`, and rendering with defaults. Nothing may panic, and formatting must be
//! a fixpoint whenever it succeeds.

#![no_main]

use libfuzzer_sys::fuzz_target;
use llmtool_format::Document;
use llmtool_format::format::format_source;
use llmtool_format::report::{Source, github, human, json_records};
use llmtool_format::template::{Inputs, ToolTemplate};

fuzz_target!(|data: &[u8]| {
    let document = Document::from_bytes(data);
    let source = Source::new("fuzz.json", &document.text);
    let _ = human(&source, &document.diagnostics, false);
    let _ = github(&source, &document.diagnostics);
    let _ = json_records(&source, &document.diagnostics);
    if let Some(tool) = &document.tool {
        let _ = ToolTemplate::new(tool).render(&Inputs::new());
    }
    if let Ok(formatted) = format_source(&document.text, true) {
        let again = format_source(&formatted.text, false).expect("canonical output formats");
        assert_eq!(again.text, formatted.text, "fmt is not a fixpoint");
    }
});
