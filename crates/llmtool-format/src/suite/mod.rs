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

pub use assertions::{Observed, SeenImage, Verdict, evaluate, score};
pub use check::{check_against, render, smart_variables};
pub use model::{ASSERTION_TYPES, Assertion, Case, Check, Metric, TestFile};
pub use read::{ReadTests, read_json, read_yaml};
pub use schema::{TESTS_SCHEMA_ID, tests_json_schema};

/// How a test file's name ends, in the order a tool's test files are looked for.
const TEST_FILE_ENDINGS: [&str; 3] = [".tests.json", ".tests.yaml", ".tests.yml"];

/// Whether `name` is a test file's name (`*.tests.json`, `*.tests.yaml`, `*.tests.yml`).
pub fn is_test_file_name(name: &str) -> bool {
    test_file_ending(name).is_some()
}

/// The tool a test file named `name` tests when it names none: `X.tests.json` → `X.json`.
pub fn default_tool_name(name: &str) -> Option<String> {
    test_file_ending(name).map(|end| format!("{}.json", &name[..name.len() - end.len()]))
}

/// The names the test files of the tool file `name` (`X.json`) have, in the order they are
/// looked for: `X.tests.json`, `X.tests.yaml`, `X.tests.yml` (so `x.llmtool.json`'s are
/// `x.llmtool.tests.*`). None when `name` is not a tool file's (`.json`, in any case), or is
/// a test file's itself. `llmtool test` and the editor's Test lens both follow this rule.
pub fn test_file_names(name: &str) -> Vec<String> {
    let is_json = name.len() > 5
        && name.is_char_boundary(name.len() - 5)
        && name[name.len() - 5..].eq_ignore_ascii_case(".json");
    if !is_json || is_test_file_name(name) {
        return Vec::new();
    }
    let stem = &name[..name.len() - 5];
    TEST_FILE_ENDINGS.iter().map(|end| format!("{stem}{end}")).collect()
}

/// The ending of `name` that makes it a test file's name.
fn test_file_ending(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    TEST_FILE_ENDINGS.iter().copied().find(|end| lower.ends_with(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_and_its_test_files_name_each_other() {
        assert_eq!(
            test_file_names("x.llmtool.json"),
            ["x.llmtool.tests.json", "x.llmtool.tests.yaml", "x.llmtool.tests.yml"]
        );
        assert_eq!(test_file_names("Tides.JSON")[0], "Tides.tests.json");
        for name in test_file_names("tides.json") {
            assert!(is_test_file_name(&name));
            assert_eq!(default_tool_name(&name).as_deref(), Some("tides.json"));
        }
        for not_a_tool in ["tides.yaml", ".json", "tides.tests.json", "naïve"] {
            assert_eq!(test_file_names(not_a_tool), Vec::<String>::new(), "{not_a_tool}");
        }
        assert_eq!(test_file_names("é.json")[0], "é.tests.json");
    }
}
