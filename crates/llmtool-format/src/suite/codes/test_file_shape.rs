//! `LT801` test-file-shape: a test file's structure is wrong.

use crate::declare_rule;

declare_rule! {
    /// A test file's structure is wrong: not an object, no `cases` list, or a field of the
    /// wrong type.
    ///
    /// A test file is an object with a `cases` list; each case is an object with `vars` (an
    /// object) and `assert` (a list), and optionally `name` and `threshold`. The file may also
    /// name its `tool`, a `threshold` for every case and an `assert` list every case gets.
    ///
    /// ```json
    /// { "cases": { "vars": { "review": "Great" } } }
    /// ```
    pub static TEST_FILE_SHAPE = ("LT801", "test-file-shape", Error);
}
