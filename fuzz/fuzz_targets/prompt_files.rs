//! Fuzz target: any text read as each prompt-file format (YAML front matter, `llm` templates
//! with their comment block) and as Emacs Lisp. Nothing may panic or hang; whatever reads back
//! as a tool must be a tool file that itself checks without a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use llmtool_convert::{PromptFormat, read_elisp, tool_file};
use llmtool_format::Document;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for format in PromptFormat::ALL {
        if let Ok(converted) = format.read(text) {
            let _ = Document::from_text(converted.value);
        }
    }
    if let Ok(converted) = read_elisp(text) {
        let _ = Document::from_text(tool_file(&converted.value).value);
    }
});
