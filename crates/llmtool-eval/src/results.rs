//! What a test run found, by file, case and model, and run: what every report is made from.

use serde::Serialize;

/// One test file's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileResult {
    pub path: String,
    pub tool: String,
    pub models: Vec<String>,
    pub cases: Vec<CaseResult>,
}

/// A case on one model: its runs, and whether enough of them passed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    pub name: String,
    /// The line (from 1) the case is written at.
    pub line: usize,
    pub model: String,
    pub runs: Vec<RunResult>,
    pub passed_runs: u32,
    /// Runs that must pass for the case to pass.
    pub needed: u32,
    pub pass: bool,
}

/// One run of a case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunResult {
    pub repeat: u32,
    /// The answer came from the cache (nothing was sent).
    pub cached: bool,
    pub output: Option<String>,
    /// Why the run has no answer, or why its answer missed the tool's expected output.
    pub error: Option<String>,
    pub score: f64,
    pub pass: bool,
    /// Output tokens, as the provider counted them.
    pub output_tokens: Option<u64>,
    pub cost: Option<f64>,
    pub latency_ms: Option<u64>,
    pub assertions: Vec<AssertionResult>,
}

/// One assertion's verdict in a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AssertionResult {
    #[serde(rename = "type")]
    pub kind: String,
    pub weight: f64,
    pub pass: bool,
    pub score: f64,
    /// Why it failed, or a judge's reason.
    pub reason: Option<String>,
}

impl FileResult {
    /// Cases that passed, of all.
    pub fn passed(&self) -> (usize, usize) {
        (self.cases.iter().filter(|c| c.pass).count(), self.cases.len())
    }
}

impl CaseResult {
    /// What its runs cost, where known.
    pub fn cost(&self) -> f64 {
        // Folded from +0: an empty `sum` of floats is −0, printed `$-0.000000`.
        self.runs.iter().filter(|r| !r.cached).filter_map(|r| r.cost).fold(0.0, |a, b| a + b)
    }

    /// Its runs' mean latency, where known.
    pub fn mean_latency_ms(&self) -> Option<u64> {
        let known: Vec<u64> = self.runs.iter().filter_map(|r| r.latency_ms).collect();
        (!known.is_empty()).then(|| known.iter().sum::<u64>() / known.len() as u64)
    }
}
