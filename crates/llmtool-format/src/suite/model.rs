//! A test file as data: its cases, each with values for the tool's variables and the
//! assertions its answers must pass, with the spans they were written at.

use crate::span::Span;

/// A test file: the cases of one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct TestFile {
    /// The tool, relative to the test file, when the file names it.
    pub tool: Option<String>,
    /// The share of a case's weighted assertions a run must pass (default 1: all of them).
    pub threshold: Option<f64>,
    /// Assertions every case gets, before its own.
    pub shared: Vec<Assertion>,
    pub cases: Vec<Case>,
}

/// One case: values for the variables, and what the answer must satisfy.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub name: String,
    pub vars: serde_json::Map<String, serde_json::Value>,
    pub assertions: Vec<Assertion>,
    pub threshold: Option<f64>,
    /// Where the case is written (its object), for annotations.
    pub span: Span,
    /// Where its `vars` are written.
    pub vars_span: Span,
}

/// An assertion and its weight in the case's score.
#[derive(Debug, Clone, PartialEq)]
pub struct Assertion {
    pub check: Check,
    pub weight: f64,
    pub span: Span,
}

/// What an answer is checked for. The text checks look at the answer after the tool's
/// expected output is enforced (a code block's code, a limited answer's value).
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    Equals(String),
    OneOf(Vec<String>),
    Contains {
        text: String,
        ignore_case: bool,
    },
    NotContains {
        text: String,
        ignore_case: bool,
    },
    /// A regular expression (Rust `regex` syntax) the answer matches somewhere.
    Regex(String),
    StartsWith(String),
    /// The answer parses as JSON.
    Json,
    /// The answer parses as JSON valid against this schema.
    JsonSchema(serde_json::Value),
    /// The value at a JSON path (RFC 9535) of the answer equals `value`.
    JsonPath {
        path: String,
        value: serde_json::Value,
    },
    /// At most this many characters.
    MaxLength(u64),
    /// At most this many output tokens, as the provider counts them.
    MaxTokens(u64),
    /// At most this many US dollars.
    MaxCost(f64),
    MaxLatencyMs(u64),
    /// At least `threshold` similar to `reference` by `metric` (0 to 1).
    Similar {
        reference: String,
        metric: Metric,
        threshold: f64,
    },
    /// A judge model grades the answer against `rubric`; a grade of `threshold` or more passes.
    Judge {
        rubric: String,
        model: Option<String>,
        threshold: f64,
    },
    /// An image tool made at least one picture, and every one is this size.
    ImageSize(crate::output::ImageSize),
    /// An image tool made at least one picture, and every one is in this format.
    ImageFormat(crate::output::ImageFormat),
}

/// How `similar` compares two texts (each from the `strsim` crate, 1 when equal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// 1 − edit distance / the longer length.
    Levenshtein,
    JaroWinkler,
    /// Overlap of the two texts' character pairs (Sørensen–Dice).
    Dice,
}

impl Metric {
    pub const NAMES: [&'static str; 3] = ["levenshtein", "jaro_winkler", "dice"];

    pub fn parse(name: &str) -> Option<Metric> {
        match name {
            "levenshtein" => Some(Metric::Levenshtein),
            "jaro_winkler" => Some(Metric::JaroWinkler),
            "dice" => Some(Metric::Dice),
            _ => None,
        }
    }

    pub fn score(self, a: &str, b: &str) -> f64 {
        match self {
            Metric::Levenshtein => strsim::normalized_levenshtein(a, b),
            Metric::JaroWinkler => strsim::jaro_winkler(a, b),
            Metric::Dice => strsim::sorensen_dice(a, b),
        }
    }
}

/// Every assertion type, as written in `type`.
pub const ASSERTION_TYPES: [&str; 17] = [
    "equals",
    "one_of",
    "contains",
    "not_contains",
    "regex",
    "starts_with",
    "json",
    "json_schema",
    "json_path",
    "max_length",
    "max_tokens",
    "max_cost",
    "max_latency_ms",
    "similar",
    "judge",
    "image_size",
    "image_format",
];
