//! Test files of tools (`NAME.tests.json` or `.yaml`): cases of values for a tool's variables,
//! each with assertions its answers must pass. Reading them ([`read_json`], [`read_yaml`]),
//! checking them against their tool ([`check_against`]) and judging an answer
//! ([`evaluate`], [`score`]) are pure and live here; running them on models is
//! `llmtool-eval`'s.

mod assertions;
mod check;
pub mod codes;
mod model;
mod read;
mod schema;

pub use assertions::{Observed, Verdict, evaluate, score};
pub use check::{check_against, render};
pub use model::{ASSERTION_TYPES, Assertion, Case, Check, Metric, TestFile};
pub use read::{ReadTests, read_json, read_yaml};
pub use schema::{TESTS_SCHEMA_ID, tests_json_schema};

/// Whether `name` is a test file's name (`*.tests.json`, `*.tests.yaml`, `*.tests.yml`).
pub fn is_test_file_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".tests.json", ".tests.yaml", ".tests.yml"].iter().any(|end| lower.ends_with(end))
}

/// The tool a test file named `name` tests when it names none: `X.tests.json` → `X.json`.
pub fn default_tool_name(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    [".tests.json", ".tests.yaml", ".tests.yml"]
        .iter()
        .find(|end| lower.ends_with(*end))
        .map(|end| format!("{}.json", &name[..name.len() - end.len()]))
}
