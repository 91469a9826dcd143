//! The reports a test run is shown in, made from results written out here: the terminal's
//! matrix and its totals, `JUnit` XML that an XML reader takes (names escaped, counts right),
//! GitHub annotations escaped as the runner reads them, and why a case failed.

use llmtool_eval::report::{github, junit, table, why};
use llmtool_eval::{AssertionResult, CaseResult, FileResult, RunResult};
use quick_xml::XmlVersion;

fn run(repeat: u32, pass: bool, cost: f64, cached: bool) -> RunResult {
    RunResult {
        repeat,
        cached,
        output: Some("an answer".into()),
        error: None,
        score: if pass { 1.0 } else { 0.0 },
        pass,
        output_tokens: Some(3),
        cost: Some(cost),
        latency_ms: Some(100 * u64::from(repeat + 1)),
        assertions: vec![AssertionResult {
            kind: "contains".into(),
            weight: 1.0,
            pass,
            score: if pass { 1.0 } else { 0.0 },
            reason: (!pass).then(|| "no \"tide\" in the answer".into()),
        }],
    }
}

fn case(name: &str, model: &str, runs: Vec<RunResult>, needed: u32) -> CaseResult {
    let passed_runs = runs.iter().filter(|r| r.pass).count() as u32;
    CaseResult {
        name: name.into(),
        line: 7,
        model: model.into(),
        pass: passed_runs >= needed,
        passed_runs,
        needed,
        runs,
    }
}

/// One file, two models: the first case passes on both, the second (a name XML must escape)
/// fails on `mock/b`, once from the cache.
fn results() -> Vec<FileResult> {
    let tricky = "tides & <moons>, \"quoted\"";
    vec![FileResult {
        path: "tests/line,one:two.tests.json".into(),
        tool: "line".into(),
        models: vec!["mock/a".into(), "mock/b".into()],
        cases: vec![
            case("plain", "mock/a", vec![run(0, true, 0.25, false)], 1),
            case(tricky, "mock/a", vec![run(0, true, 0.25, false)], 1),
            case("plain", "mock/b", vec![run(0, true, 0.5, false)], 1),
            case(tricky, "mock/b", vec![run(0, false, 0.5, false), run(1, false, 0.5, true)], 1),
        ],
    }]
}

#[test]
fn the_matrix_names_each_failure_and_totals_cases_runs_and_cost() {
    let shown = table(&results());
    assert!(shown.contains("mock/a") && shown.contains("mock/b"), "{shown}");
    assert!(
        shown.contains(
            "FAIL tides & <moons>, \"quoted\" on mock/b (tests/line,one:two.tests.json:7): 0 of 2 runs passed, 1 needed; run 1: contains: no \"tide\" in the answer"
        ),
        "{shown}"
    );
    // The cached run cost nothing this time: 0.25 + 0.25 + 0.5 + 0.5.
    assert!(
        shown.ends_with("3 of 4 case(s) passed (75%); 5 run(s), 1 from the cache; $1.50 spent\n"),
        "{shown}"
    );
}

#[test]
fn junit_is_xml_a_reader_takes_with_a_suite_per_model_and_the_failure_escaped() {
    let xml = junit(&results());
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut suites, mut cases, mut failures) = (Vec::new(), 0, Vec::new());
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Eof => break,
            quick_xml::events::Event::Start(tag) | quick_xml::events::Event::Empty(tag) => {
                let attribute = |name: &str| {
                    tag.try_get_attribute(name)
                        .unwrap()
                        .map(|a| a.normalized_value(XmlVersion::Implicit1_0).unwrap().into_owned())
                };
                match tag.name().0 {
                    "testsuite" => suites.push((
                        attribute("name").unwrap(),
                        attribute("tests").unwrap(),
                        attribute("failures").unwrap(),
                    )),
                    "testcase" => cases += 1,
                    "failure" => failures.push(attribute("message").unwrap()),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let on = |model: &str| format!("tests/line,one:two.tests.json on {model}");
    assert_eq!(
        suites,
        [(on("mock/a"), "2".into(), "0".into()), (on("mock/b"), "2".into(), "1".into())]
    );
    assert_eq!(cases, 4);
    assert_eq!(failures.len(), 1);
    assert!(failures[0].contains("no \"tide\" in the answer"), "{failures:?}");
    assert!(xml.contains("name=\"tides &amp; &lt;moons&gt;, &quot;quoted&quot;\""), "{xml}");
}

#[test]
fn github_annotations_escape_the_path_and_the_message_as_the_runner_reads_them() {
    let mut files = results();
    files[0].cases[3].runs[0].error = Some("50% of it\nthen more".into());
    let annotations = github(&files);
    assert_eq!(annotations.lines().count(), 1, "{annotations}");
    assert!(
        annotations.starts_with(
            "::error file=tests/line%2Cone%3Atwo.tests.json,line=7,title=llmtool test::"
        ),
        "{annotations}"
    );
    assert!(annotations.contains("50%25 of it%0Athen more"), "{annotations}");
}

#[test]
fn why_a_case_failed_is_its_first_failing_run_or_too_few_passes() {
    let files = results();
    let failed = &files[0].cases[3];
    assert_eq!(
        why(failed),
        "0 of 2 runs passed, 1 needed; run 1: contains: no \"tide\" in the answer"
    );
    // Every run passed its assertions, yet fewer than needed ran: the count says so.
    let short = case("short", "mock/a", vec![run(0, true, 0.0, false)], 2);
    assert_eq!(why(&short), "1 of 1 runs passed, 2 needed");
}
