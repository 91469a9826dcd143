//! Running a test file: each case on each model, `repeat` times, from the cache when it can,
//! its assertions scored and its runs counted against `min_pass`.

use futures_util::StreamExt as _;
use llmtool_format::LineIndex;
use llmtool_format::model::ToolKind;
use llmtool_format::output::{ImageFormat, ImageSize};
use llmtool_format::suite::{self, Case, Check, Observed, SeenImage, TestFile, Verdict};
use llmtool_format::template::ToolTemplate;
use llmtool_providers::run::{RunOptions, RunRequest};
use llmtool_runtime::{Choice, ParamOverrides, Runtime, SmartRun, Subject, TestsFile};

use crate::cache::{Cache, CachedAnswer};
use crate::results::{AssertionResult, CaseResult, FileResult, RunResult};

/// How a test run goes.
#[derive(Debug, Clone)]
pub struct Options {
    /// The models to run on; none: the tool's own `model_version` list (else the default).
    pub models: Vec<String>,
    /// Runs of each case on each model.
    pub repeat: u32,
    /// Runs that must pass for a case to pass (at most `repeat`).
    pub min_pass: u32,
    /// Where answers are cached; `None` sends every run.
    pub cache: Option<Cache>,
    /// Runs sent at once (at least 1); the results keep the cases' order whatever it is.
    pub jobs: usize,
}

/// Runs every case of `file` (which must have its tool) on every model of `options`.
pub async fn run_file(runtime: &Runtime, file: &TestsFile, options: &Options) -> FileResult {
    let tool_name = file.tool_path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    let (Some(tests), Some(tool)) = (&file.file, &file.tool) else {
        return FileResult {
            path: file.name.clone(),
            tool: tool_name,
            models: Vec::new(),
            cases: Vec::new(),
        };
    };
    let models: Vec<Option<String>> = if !options.models.is_empty() {
        options.models.iter().cloned().map(Some).collect()
    } else if tool.models().is_empty() {
        vec![None]
    } else {
        tool.models().into_iter().map(|m| Some(m.to_owned())).collect()
    };
    let template = ToolTemplate::new(tool);
    // Each case's runs are logged as runs of the tool, with the case's values.
    let subject = Subject::with_values(
        "test",
        file.tool_path.as_ref().map(|p| p.display().to_string()),
        tool,
        serde_json::Value::Null,
    );
    let lines = LineIndex::new(&file.text);
    let repeat = options.repeat.max(1);
    let needed = options.min_pass.clamp(1, repeat);
    let mut cases = Vec::new();
    let mut shown_models = Vec::new();
    for model in &models {
        let choice = Choice { model: model.clone(), provider: None };
        let shown = match runtime.target_on(tool, &choice) {
            Ok(target) => format!("{}/{}", target.endpoint.provider, target.model),
            Err(_) => model.clone().unwrap_or_else(|| "default".to_owned()),
        };
        shown_models.push(shown.clone());
        let (template, choice, subject) = (&template, &choice, &subject);
        let every_run =
            tests.cases.iter().flat_map(|case| (0..repeat).map(move |index| (case, index)));
        let runs: Vec<RunResult> = futures_util::stream::iter(every_run)
            .map(|(case, index)| {
                run_case(runtime, template, (tool, subject), case, tests, choice, index, options)
            })
            .buffered(options.jobs.max(1))
            .collect()
            .await;
        let mut runs = runs.into_iter();
        for case in &tests.cases {
            let runs: Vec<RunResult> = runs.by_ref().take(repeat as usize).collect();
            let passed_runs = runs.iter().filter(|r| r.pass).count() as u32;
            cases.push(CaseResult {
                name: case.name.clone(),
                line: lines.line_column(&file.text, case.span.start).line,
                model: shown.clone(),
                runs,
                passed_runs,
                needed,
                pass: passed_runs >= needed,
            });
        }
    }
    FileResult { path: file.name.clone(), tool: tool_name, models: shown_models, cases }
}

#[allow(clippy::too_many_arguments, reason = "one run's inputs, passed as they are")]
async fn run_case(
    runtime: &Runtime,
    template: &ToolTemplate,
    (tool, subject): (&llmtool_format::model::Tool, &Subject),
    case: &Case,
    tests: &TestFile,
    choice: &Choice,
    index: u32,
    options: &Options,
) -> RunResult {
    let failed = |error: String| RunResult {
        repeat: index,
        cached: false,
        output: None,
        error: Some(error),
        score: 0.0,
        pass: false,
        output_tokens: None,
        cost: None,
        latency_ms: None,
        assertions: Vec::new(),
    };
    if tool.kind() == ToolKind::Smart {
        let variables = match suite::smart_variables(template, &case.vars) {
            Ok(variables) => variables,
            Err(problem) => return failed(problem),
        };
        let subject =
            Subject { values: serde_json::Value::Object(case.vars.clone()), ..subject.clone() };
        let answer = match smart_answer_of(runtime, tool, variables, choice, &subject).await {
            Ok(answer) => answer,
            Err(error) => return failed(error),
        };
        // What a judge is told was asked: the values the code was given.
        let asked = serde_json::Value::Object(case.vars.clone()).to_string();
        return judged(runtime, &answer, false, &asked, (case, tests), index, options).await;
    }
    let prompt = match suite::render(template, &case.vars) {
        Ok(prompt) => prompt,
        Err(problem) => return failed(problem),
    };
    let request = match runtime.request_on(tool, prompt, ParamOverrides::default(), choice) {
        Ok(request) => request,
        Err(error) => return failed(runtime.redact(&error.to_string()).into_owned()),
    };
    let key = cache_key(&request, index);
    let cached = options.cache.as_ref().and_then(|cache| cache.get(&key));
    let (answer, from_cache) = match cached {
        // An answer cached before keys were hidden from answers is shown without them too.
        Some(mut answer) => {
            answer.raw = request.secrets.hide_secrets(&answer.raw).into_owned();
            answer.output = answer.output.map(|o| request.secrets.hide_secrets(&o).into_owned());
            (answer, true)
        }
        None => {
            let subject =
                Subject { values: serde_json::Value::Object(case.vars.clone()), ..subject.clone() };
            match answer_of(runtime, &request, &subject).await {
                Ok(answer) => {
                    if let Some(cache) = &options.cache {
                        // A cache that cannot be written only costs the next run its answers.
                        let _ = cache.put(&key, &answer);
                    }
                    (answer, false)
                }
                Err(error) => return failed(error),
            }
        }
    };
    judged(runtime, &answer, from_cache, &request.first_message(), (case, tests), index, options)
        .await
}

/// A run's answer judged by the case's assertions (and the tool's expected output).
async fn judged(
    runtime: &Runtime,
    answer: &CachedAnswer,
    from_cache: bool,
    asked: &str,
    (case, tests): (&Case, &TestFile),
    index: u32,
    options: &Options,
) -> RunResult {
    let images: Vec<SeenImage> = answer.images.iter().filter_map(|seen| seen_image(seen)).collect();
    let observed = Observed {
        text: answer.output.as_deref().unwrap_or(&answer.raw),
        output_tokens: answer.output_tokens,
        cost: answer.cost,
        latency_ms: Some(answer.latency_ms),
        images: &images,
    };
    let mut assertions = Vec::new();
    let mut verdicts = Vec::new();
    for assertion in tests.shared.iter().chain(&case.assertions) {
        let verdict = match &assertion.check {
            Check::Judge { rubric, model, threshold } => {
                crate::judge::grade(
                    runtime,
                    rubric,
                    model.as_deref(),
                    *threshold,
                    (asked, observed.text),
                    options.cache.as_ref(),
                )
                .await
            }
            check => suite::evaluate(check, &observed).unwrap_or(Verdict {
                pass: false,
                score: 0.0,
                reason: None,
            }),
        };
        assertions.push(AssertionResult {
            kind: kind_of(&assertion.check).to_owned(),
            weight: assertion.weight,
            pass: verdict.pass,
            score: verdict.score,
            reason: verdict.reason.clone(),
        });
        verdicts.push((assertion.weight, verdict));
    }
    let weighed: Vec<(f64, &Verdict)> = verdicts.iter().map(|(w, v)| (*w, v)).collect();
    let threshold = case.threshold.or(tests.threshold).unwrap_or(1.0);
    let (score, reached) = suite::score(&weighed, threshold);
    // An answer that misses the tool's expected output fails, whatever its assertions say.
    let pass = reached && answer.rejection.is_none();
    RunResult {
        repeat: index,
        cached: from_cache,
        output: answer.output.clone().or(Some(answer.raw.clone())),
        error: answer.rejection.clone(),
        score,
        pass,
        output_tokens: answer.output_tokens,
        cost: answer.cost,
        latency_ms: Some(answer.latency_ms),
        assertions,
    }
}

/// A smart tool's answer to `variables`: its code run in the sandbox (never cached: the code
/// may answer differently each time), its `llm()` calls on the case's model, kept as runs of
/// `subject`. The code failing is an error, as a provider failing is.
async fn smart_answer_of(
    runtime: &Runtime,
    tool: &llmtool_format::model::Tool,
    variables: serde_json::Map<String, serde_json::Value>,
    choice: &Choice,
    subject: &Subject,
) -> Result<CachedAnswer, String> {
    // The tool's requirements' lock is beside its file.
    let lock = llmtool_runtime::site::lock_of(subject.tool_path.as_deref());
    let run =
        SmartRun { variables, choice: choice.clone(), scratch: true, lock, ..SmartRun::default() };
    let finished = runtime
        .run_smart(tool, run, Some(subject), std::future::pending())
        .await
        .map_err(|error| runtime.redact(&error.to_string()).into_owned())?;
    let output = finished.ran.result.clone().map_err(|failure| failure.to_string())?;
    Ok(CachedAnswer {
        rejection: None,
        raw: output.clone(),
        output: Some(output),
        output_tokens: finished.calls.iter().filter_map(|c| c.output_tokens).reduce(|a, b| a + b),
        cost: finished.cost(),
        latency_ms: u64::try_from(finished.ran.wall.as_millis()).unwrap_or(u64::MAX),
        images: Vec::new(),
    })
}

/// What makes a run's answer: where it goes, what is sent, and which repeat it is.
fn cache_key(request: &RunRequest, index: u32) -> String {
    let params = serde_json::to_string(&request.params).unwrap_or_default();
    Cache::key(&[
        &request.target.endpoint.provider,
        &request.target.model,
        &request.first_message(),
        &params,
        &index.to_string(),
    ])
}

/// Runs `request` once, with the expected output enforced (asking again as a run does), and
/// keeps it as a run of `subject` (an answer from the cache cost nothing and is not kept).
pub(crate) async fn answer_of(
    runtime: &Runtime,
    request: &RunRequest,
    subject: &Subject,
) -> Result<CachedAnswer, String> {
    let finished = runtime
        .execute(request, RunOptions::WHOLE, Some(subject), &mut |_| {}, std::future::pending())
        .await;
    match finished.result {
        Ok(report) => Ok(CachedAnswer {
            rejection: report.output.is_none().then(|| report.error.clone().unwrap_or_default()),
            output: report.output,
            raw: report.raw,
            output_tokens: report.usage.output_tokens,
            cost: report.cost,
            latency_ms: report.latency_ms,
            images: report
                .images
                .iter()
                .map(|image| format!("{} {}x{}", image.format, image.width, image.height))
                .collect(),
        }),
        Err(error) => Err(runtime.redact(&error.to_string()).into_owned()),
    }
}

/// A picture as a cached answer describes it (`png 1024x1024`).
fn seen_image(described: &str) -> Option<SeenImage> {
    let (format, size) = described.split_once(' ')?;
    Some(SeenImage { format: ImageFormat::from_name(format)?, size: ImageSize::parse(size)? })
}

/// An assertion's type, as written.
pub fn kind_of(check: &Check) -> &'static str {
    match check {
        Check::Equals(_) => "equals",
        Check::OneOf(_) => "one_of",
        Check::Contains { .. } => "contains",
        Check::NotContains { .. } => "not_contains",
        Check::Regex(_) => "regex",
        Check::StartsWith(_) => "starts_with",
        Check::Json => "json",
        Check::JsonSchema(_) => "json_schema",
        Check::JsonPath { .. } => "json_path",
        Check::MaxLength(_) => "max_length",
        Check::MaxTokens(_) => "max_tokens",
        Check::MaxCost(_) => "max_cost",
        Check::MaxLatencyMs(_) => "max_latency_ms",
        Check::Similar { .. } => "similar",
        Check::Judge { .. } => "judge",
        Check::ImageSize(_) => "image_size",
        Check::ImageFormat(_) => "image_format",
    }
}
