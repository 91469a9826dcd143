//! `LT806` test-tool-missing: a test file's tool cannot be found or read.

use crate::declare_rule;

declare_rule! {
    /// A test file's tool cannot be found or read.
    ///
    /// A test file names its tool with `tool` (a path relative to the test file); without
    /// it, `NAME.tests.json` tests the tool `NAME.json` beside it.
    pub static TEST_TOOL_MISSING = ("LT806", "test-tool-missing", Error);
}
