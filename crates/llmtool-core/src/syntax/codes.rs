//! The diagnostic codes of the parser (`LT0xx`): everything that makes a file not plain JSON.

use crate::declare_rule;

declare_rule! {
    /// A comma follows the last member of an object or the last element of an array.
    ///
    /// JSON allows no comma before `}` or `]`. The format's own published example has one (after
    /// the first variable's `default`), so files copied from it usually carry the slip.
    /// `llmtool fmt --fix` deletes the comma.
    ///
    /// ```json
    /// { "name": "topic", "default": "cats", }
    /// ```
    pub static TRAILING_COMMA = ("LT001", "trailing-comma", Error);
}

declare_rule! {
    /// Two members of an object, or two elements of an array, have no comma between them.
    ///
    /// The published example of the format lacks the comma after the multi-select variable's
    /// `default` array. The diagnostic points just after the value that needs the comma;
    /// `llmtool fmt --fix` inserts it.
    ///
    /// ```json
    /// "default": ["value1", "value2"]
    /// "allowed_values": ["value1", "value2", "value3"]
    /// ```
    pub static MISSING_COMMA = ("LT002", "missing-comma", Error);
}

declare_rule! {
    /// A `//` or `/* */` comment.
    ///
    /// Comments are accepted so that hand-edited files still load, but plain JSON readers (every
    /// other program that takes the format) reject them. `llmtool fmt --fix` removes them; keep
    /// notes in `metadata.usage_notes` or an `x-` key instead.
    ///
    /// ```json
    /// { "model_prompt": "Hi" // greeting
    /// }
    /// ```
    pub static COMMENT = ("LT003", "comment", Warning);
}

declare_rule! {
    /// A string has no closing quote before the end of its line or of the file.
    ///
    /// JSON strings cannot span lines. The parser ends the string at the line break and goes on,
    /// so later problems are still reported.
    ///
    /// ```json
    /// { "model_prompt": "Summarize this
    /// }
    /// ```
    pub static UNTERMINATED_STRING = ("LT004", "unterminated-string", Error);
}

declare_rule! {
    /// The file ends before every `{` and `[` is closed.
    ///
    /// Usually a truncated download or an editor that saved half a file. The diagnostic names
    /// the bracket that is still open.
    ///
    /// ```json
    /// { "model_prompt": "Hi", "metadata": {
    /// ```
    pub static UNEXPECTED_END = ("LT005", "unexpected-end", Error);
}

declare_rule! {
    /// Bytes that are not valid UTF-8.
    ///
    /// JSON text is UTF-8. The offending bytes are shown as `?` in the rest of the report; the
    /// file was probably saved in a legacy encoding such as Latin-1 or UTF-16.
    pub static INVALID_UTF8 = ("LT006", "invalid-utf8", Error);
}

declare_rule! {
    /// The file is empty, or holds only whitespace and comments.
    pub static EMPTY_INPUT = ("LT007", "empty-input", Error);
}

declare_rule! {
    /// The top-level value is not an object.
    ///
    /// A tool file is one JSON object with at least `model_prompt`. An array of tools is not a
    /// tool file: split it into one file per tool.
    ///
    /// ```json
    /// ["Summarize {{text}}"]
    /// ```
    pub static NOT_AN_OBJECT = ("LT008", "not-an-object", Error);
}

declare_rule! {
    /// Objects and arrays are nested deeper than 128 levels.
    ///
    /// No field of the format nests anywhere near that deep, so such a file is garbage or an
    /// attack. The nested part is skipped (without recursion, so even 200,000 levels are safe)
    /// and the rest of the file is still checked.
    pub static NESTING_TOO_DEEP = ("LT009", "nesting-too-deep", Error);
}

declare_rule! {
    /// A token that cannot appear where it is: a stray `:`, a bare word, a closing bracket of
    /// the wrong kind, or a character that starts no JSON token.
    ///
    /// ```json
    /// { "temperature": NaN }
    /// ```
    pub static UNEXPECTED_TOKEN = ("LT010", "unexpected-token", Error);
}

declare_rule! {
    /// A backslash escape that JSON does not define, or a malformed `\u` escape.
    ///
    /// Valid escapes are `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` and `\uXXXX`. Windows
    /// paths are the usual cause: write `C:\\Users`, not `C:\Users`. The fix doubles the
    /// backslash.
    pub static INVALID_ESCAPE = ("LT011", "invalid-escape", Error);
}

declare_rule! {
    /// A raw control character (such as a tab) inside a string.
    ///
    /// JSON requires control characters in strings to be escaped. The fix writes the escape.
    pub static CONTROL_CHARACTER = ("LT012", "control-character", Error);
}

declare_rule! {
    /// The same key appears twice in one object.
    ///
    /// JSON readers disagree on which copy wins, so the file means different things to
    /// different programs. llmtool uses the last copy; remove one of them.
    ///
    /// ```json
    /// { "model_prompt": "A", "model_prompt": "B" }
    /// ```
    pub static DUPLICATE_KEY = ("LT013", "duplicate-key", Error);
}

declare_rule! {
    /// A number that breaks JSON's number grammar: a leading `+`, `.` or zero, or a trailing `.`.
    ///
    /// The fix writes the JSON spelling (`.5` becomes `0.5`).
    pub static INVALID_NUMBER = ("LT014", "invalid-number", Error);
}

declare_rule! {
    /// A key is not followed by `:`.
    ///
    /// ```json
    /// { "model_prompt" "Hi" }
    /// ```
    pub static MISSING_COLON = ("LT015", "missing-colon", Error);
}

declare_rule! {
    /// A string in single quotes.
    ///
    /// JSON strings use double quotes. The fix rewrites the string with double quotes.
    pub static SINGLE_QUOTED_STRING = ("LT016", "single-quoted-string", Error);
}

declare_rule! {
    /// An object key without quotes, as JavaScript and JSON5 allow.
    ///
    /// ```json
    /// { model_prompt: "Hi" }
    /// ```
    pub static UNQUOTED_KEY = ("LT017", "unquoted-key", Error);
}

declare_rule! {
    /// A `/*` comment that is never closed with `*/`.
    pub static UNTERMINATED_COMMENT = ("LT018", "unterminated-comment", Error);
}

declare_rule! {
    /// More content after the end of the top-level object.
    ///
    /// Often two tools pasted into one file: give each its own file.
    pub static TRAILING_CONTENT = ("LT019", "trailing-content", Error);
}

/// Whether `rule` is one of the parser's codes (`LT0xx`).
pub fn is_syntax(rule: &crate::diagnostic::Rule) -> bool {
    rule.code.starts_with("LT0")
}
