//! A test run shown: a matrix in the terminal (cases by models: runs passed, cost, latency),
//! `JUnit` XML for CI dashboards, and GitHub annotations on the test files' lines.

use std::fmt::Write as _;

use comfy_table::{ContentArrangement, Table, presets};
use llmtool_providers::pricing::dollars;
use quick_xml::escape::escape;

use crate::results::{CaseResult, FileResult};

/// The matrix of each file, then why each failing case failed, then the totals.
pub fn table(files: &[FileResult]) -> String {
    let mut out = String::new();
    for file in files {
        let mut table = Table::new();
        table
            .load_style(presets::ASCII_BORDERS_ONLY_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic);
        let mut header = vec![format!("{} ({})", file.path, file.tool)];
        header.extend(file.models.iter().cloned());
        table.set_header(header);
        let names: Vec<&str> = unique(file.cases.iter().map(|c| c.name.as_str()));
        for name in &names {
            let mut row = vec![(*name).to_owned()];
            for model in &file.models {
                let cell = file.cases.iter().find(|c| c.name == *name && &c.model == model);
                row.push(cell.map_or_else(String::new, cell_text));
            }
            table.add_row(row);
        }
        if names.len() > 1 {
            let mut totals = vec!["cases passed".to_owned()];
            totals.extend(file.models.iter().map(|model| model_totals(file, model)));
            table.add_row(totals);
        }
        let _ = writeln!(out, "{table}");
        for case in file.cases.iter().filter(|c| !c.pass) {
            let _ = writeln!(
                out,
                "FAIL {} on {} ({}:{}): {}",
                case.name,
                case.model,
                file.path,
                case.line,
                why(case)
            );
        }
    }
    let (passed, total) =
        files.iter().map(FileResult::passed).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let cost = files.iter().flat_map(|f| &f.cases).map(CaseResult::cost).fold(0.0, |a, b| a + b);
    let cached =
        files.iter().flat_map(|f| &f.cases).flat_map(|c| &c.runs).filter(|r| r.cached).count();
    let runs = files.iter().flat_map(|f| &f.cases).map(|c| c.runs.len()).sum::<usize>();
    let rate = if total > 0 { 100.0 * passed as f64 / total as f64 } else { 100.0 };
    let _ = writeln!(
        out,
        "{passed} of {total} case(s) passed ({rate:.0}%); {runs} run(s), {cached} from the cache; {} spent",
        dollars(cost)
    );
    out
}

/// `2/3 ✓ $0.000120 340 ms`.
fn cell_text(case: &CaseResult) -> String {
    let mark = if case.pass { "pass" } else { "FAIL" };
    let mut text = format!("{mark} {}/{}", case.passed_runs, case.runs.len());
    let cost = case.cost();
    if cost > 0.0 {
        let _ = write!(text, " {}", dollars(cost));
    }
    if let Some(ms) = case.mean_latency_ms() {
        let _ = write!(text, " {ms} ms");
    }
    text
}

/// A model's column total: `2/3 (67%) $0.000240 310 ms`, its cases passed, what they cost
/// and their mean latency.
fn model_totals(file: &FileResult, model: &str) -> String {
    let cases: Vec<&CaseResult> = file.cases.iter().filter(|c| c.model == model).collect();
    let passed = cases.iter().filter(|c| c.pass).count();
    let rate = if cases.is_empty() { 100.0 } else { 100.0 * passed as f64 / cases.len() as f64 };
    let mut text = format!("{passed}/{} ({rate:.0}%)", cases.len());
    let cost = cases.iter().map(|c| c.cost()).fold(0.0, |a, b| a + b);
    if cost > 0.0 {
        let _ = write!(text, " {}", dollars(cost));
    }
    let latencies: Vec<u64> =
        cases.iter().flat_map(|c| &c.runs).filter_map(|r| r.latency_ms).collect();
    if !latencies.is_empty() {
        let _ = write!(text, " {} ms", latencies.iter().sum::<u64>() / latencies.len() as u64);
    }
    text
}

/// Why a case failed: its first failing run's error, or its failed assertions' reasons.
pub fn why(case: &CaseResult) -> String {
    let Some(run) = case.runs.iter().find(|r| !r.pass) else {
        return format!(
            "{} of {} runs passed, {} needed",
            case.passed_runs,
            case.runs.len(),
            case.needed
        );
    };
    let mut reasons: Vec<String> = run.error.iter().cloned().collect();
    reasons.extend(
        run.assertions
            .iter()
            .filter(|a| !a.pass)
            .map(|a| format!("{}: {}", a.kind, a.reason.as_deref().unwrap_or("failed"))),
    );
    format!(
        "{} of {} runs passed, {} needed; run {}: {}",
        case.passed_runs,
        case.runs.len(),
        case.needed,
        run.repeat + 1,
        reasons.join("; ")
    )
}

fn unique<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = Vec::new();
    for name in names {
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen
}

/// `JUnit` XML: a test suite per file and model, a test case per case.
pub fn junit(files: &[FileResult]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"llmtool test\">\n",
    );
    for file in files {
        for model in &file.models {
            let cases: Vec<&CaseResult> = file.cases.iter().filter(|c| &c.model == model).collect();
            let failures = cases.iter().filter(|c| !c.pass).count();
            let seconds: f64 =
                cases.iter().flat_map(|c| &c.runs).filter_map(|r| r.latency_ms).sum::<u64>() as f64
                    / 1000.0;
            let _ = writeln!(
                out,
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" time=\"{seconds:.3}\">",
                escape(format!("{} on {model}", file.path).as_str()),
                cases.len()
            );
            for case in cases {
                let time =
                    case.runs.iter().filter_map(|r| r.latency_ms).sum::<u64>() as f64 / 1000.0;
                let _ = write!(
                    out,
                    "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" line=\"{}\" time=\"{time:.3}\"",
                    escape(case.name.as_str()),
                    escape(file.tool.as_str()),
                    escape(file.path.as_str()),
                    case.line
                );
                if case.pass {
                    out.push_str("/>\n");
                } else {
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"{}\"/>\n    </testcase>",
                        escape(why(case).as_str())
                    );
                }
            }
            out.push_str("  </testsuite>\n");
        }
    }
    out.push_str("</testsuites>\n");
    out
}

/// GitHub Actions annotations: an error on the line of each failing case.
pub fn github(files: &[FileResult]) -> String {
    let mut out = String::new();
    for file in files {
        for case in file.cases.iter().filter(|c| !c.pass) {
            let message = format!("{} on {}: {}", case.name, case.model, why(case));
            let _ = writeln!(
                out,
                "::error file={},line={},title=llmtool test::{}",
                property(&file.path),
                case.line,
                data(&message)
            );
        }
    }
    out
}

/// A workflow command's data, escaped as GitHub reads it.
fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property, escaped as GitHub reads it.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}
