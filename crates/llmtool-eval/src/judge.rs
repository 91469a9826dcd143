//! The `judge` assertion: a judge model grades an answer against a rubric, as JSON with a
//! score from 0 to 1 and a one-sentence reason, which is kept. The local model judges unless
//! the assertion names another; its grades are cached like answers.

use llmtool_format::Document;
use llmtool_format::suite::Verdict;
use llmtool_runtime::{Choice, ParamOverrides, Runtime, Subject};
use serde_json::{Value, json};

use crate::cache::{Cache, CachedAnswer};

/// The judge's model when the assertion names none: the embedded local model.
pub const DEFAULT_JUDGE: &str = "local";

/// The judge's own tool: a prompt that asks for a grade as JSON.
fn judge_tool() -> Option<llmtool_format::model::Tool> {
    let tool = json!({
        "model_prompt": "You grade an answer against a rubric.\n\nThe question:\n{{question}}\n\nThe answer:\n{{answer}}\n\nThe rubric:\n{{rubric}}\n\nReply with JSON only: {\"score\": a number from 0 (fails the rubric) to 1 (meets it fully), \"reason\": one sentence on why}.",
        "metadata": {
            "prompt_name": "Judge",
            "description": "Grades an answer against a rubric.",
            "variables": [
                {"name": "question", "type": "text", "description": "The prompt that was answered."},
                {"name": "answer", "type": "text", "description": "The answer to grade."},
                {"name": "rubric", "type": "text", "description": "What a good answer does."}
            ],
            "parameters": {"temperature": 0, "max_tokens": 200},
            "expected_output": {"type": "text", "format": "JSON"}
        }
    });
    Document::from_text(tool.to_string()).tool
}

/// The verdict of the judge on `answer` to `question` under `rubric`.
pub async fn grade(
    runtime: &Runtime,
    rubric: &str,
    model: Option<&str>,
    threshold: f64,
    (question, answer): (&str, &str),
    cache: Option<&Cache>,
) -> Verdict {
    let failed = |reason: String| Verdict { pass: false, score: 0.0, reason: Some(reason) };
    let Some(tool) = judge_tool() else {
        return failed("the judge's tool does not read".to_owned());
    };
    let template = llmtool_format::template::ToolTemplate::new(&tool);
    let mut vars = serde_json::Map::new();
    vars.insert("question".into(), json!(question));
    vars.insert("answer".into(), json!(answer));
    vars.insert("rubric".into(), json!(rubric));
    let prompt = match llmtool_format::suite::render(&template, &vars) {
        Ok(prompt) => prompt,
        Err(problem) => return failed(problem),
    };
    // The judge's runs cost as much as any: logged as a test's runs of the judge's tool.
    let subject = Subject::with_values("test", None, &tool, Value::Object(vars));
    let choice = Choice { model: Some(model.unwrap_or(DEFAULT_JUDGE).to_owned()), provider: None };
    let request = match runtime.request_on(&tool, prompt, ParamOverrides::default(), &choice) {
        Ok(request) => request,
        Err(error) => {
            return failed(format!("the judge cannot run: {}", runtime.redact(&error.to_string())));
        }
    };
    let key = Cache::key(&[
        "judge",
        &request.target.endpoint.provider,
        &request.target.model,
        &request.first_message(),
    ]);
    let graded = match cache.and_then(|cache| cache.get(&key)) {
        Some(graded) => graded,
        None => match crate::run::answer_of(runtime, &request, &subject).await {
            Ok(graded) => {
                if let Some(cache) = cache {
                    let _ = cache.put(&key, &graded);
                }
                graded
            }
            Err(error) => return failed(format!("the judge failed: {error}")),
        },
    };
    verdict_of(&graded, threshold)
}

/// The judge's grade as a verdict: its score (a number, or `true`/`false`) and its reason.
fn verdict_of(graded: &CachedAnswer, threshold: f64) -> Verdict {
    let text = graded.output.as_deref().unwrap_or(&graded.raw);
    let Ok(grade) = serde_json::from_str::<Value>(text) else {
        return Verdict {
            pass: false,
            score: 0.0,
            reason: Some(format!("the judge did not answer JSON: {text}")),
        };
    };
    let score = match &grade["score"] {
        Value::Bool(pass) => Some(if *pass { 1.0 } else { 0.0 }),
        other => {
            other.as_f64().or_else(|| grade["pass"].as_bool().map(|p| if p { 1.0 } else { 0.0 }))
        }
    };
    let reason = grade["reason"].as_str().unwrap_or("(no reason given)").to_owned();
    match score {
        Some(score) => {
            let score = score.clamp(0.0, 1.0);
            Verdict { pass: score >= threshold, score, reason: Some(reason) }
        }
        None => Verdict {
            pass: false,
            score: 0.0,
            reason: Some(format!("the judge gave no score: {text}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graded(text: &str) -> CachedAnswer {
        CachedAnswer {
            output: Some(text.into()),
            raw: text.into(),
            rejection: None,
            output_tokens: None,
            cost: None,
            latency_ms: 0,
            images: Vec::new(),
        }
    }

    #[test]
    fn a_grade_becomes_a_verdict_with_its_reason() {
        let pass = verdict_of(&graded(r#"{"score": 0.9, "reason": "Polite."}"#), 0.5);
        assert!(pass.pass && pass.reason.as_deref() == Some("Polite."));
        assert!(!verdict_of(&graded(r#"{"score": 0.2, "reason": "Rude."}"#), 0.5).pass);
        assert!(verdict_of(&graded(r#"{"score": true, "reason": "ok"}"#), 0.5).pass);
        assert!((verdict_of(&graded(r#"{"score": 7}"#), 0.5).score - 1.0).abs() < 1e-12);
        assert!(!verdict_of(&graded("not json"), 0.5).pass);
        assert!(judge_tool().is_some());
    }
}
