//! The local model as a provider: the run loop's [`Engine`], mapping a chat request (messages,
//! the tool's parameters, the output constraint, the functions offered) onto the engine.

use std::borrow::Cow;
use std::sync::mpsc::Sender;
use std::time::Duration;

use llmtool_providers::backend::Engine;
use llmtool_providers::event::Usage;
use llmtool_providers::transport::Completion;
use llmtool_providers::{ChatRequest, Constraint, Message, ProviderError, Role};

use crate::LocalError;
use crate::batcher::{self, Event, Job};
use crate::calls::{self, CallText};
use crate::chat::ChatMessage;
use crate::constrain::Grammar;
use crate::engine::GenerateOptions;
use crate::model::LocalModel;
use crate::sampler::Sampling;

/// The temperature used when a tool sets none.
pub const DEFAULT_TEMPERATURE: f64 = 0.7;

/// A loaded local model, shared by the runs of one process: its own thread answers them,
/// together when they come together (see [`crate::batcher`]).
#[derive(Debug)]
pub struct LocalEngine {
    jobs: Sender<Job>,
    name: String,
    load_time: Duration,
    /// `--seed`; else the tool's `seed` parameter; else a new one each run.
    seed: Option<u64>,
}

/// The seed of a run: `--seed`, else the tool's `seed`, else a new one each run, as a provider
/// samples, so that two runs above temperature 0 may differ and a given seed repeats them.
fn seed_of(given: Option<u64>, tool: Option<u64>) -> u64 {
    given.or(tool).unwrap_or_else(|| fastrand::u64(..))
}

impl LocalEngine {
    /// Starts the model's thread; it ends when the engine is dropped and its last answer is
    /// out.
    pub fn new(model: LocalModel, seed: Option<u64>) -> Result<Self, LocalError> {
        let (name, load_time) = (model.name.clone(), model.load_time);
        let (jobs, received) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("llmtool-local-batch".into())
            .spawn(move || batcher::serve(model, &received))
            .map_err(|e| LocalError::Model(format!("cannot start the model's thread: {e}")))?;
        Ok(Self { jobs, name, load_time, seed })
    }
}

impl LocalEngine {
    /// What `request` asks of the model: its messages and how to generate.
    pub fn options(&self, request: &ChatRequest) -> (Vec<ChatMessage>, GenerateOptions) {
        let params = &request.params;
        let seed = seed_of(self.seed, params.extra.get("seed").and_then(serde_json::Value::as_u64));
        let sampling = Sampling {
            temperature: params.temperature.unwrap_or(DEFAULT_TEMPERATURE),
            top_p: params.top_p.unwrap_or(1.0),
            frequency_penalty: params.frequency_penalty.unwrap_or(0.0) as f32,
            presence_penalty: params.presence_penalty.unwrap_or(0.0) as f32,
            seed,
        };
        // A run that offers functions keeps each call's JSON whole and leaves the answer free:
        // the run checks the answer's form, and asks again, as for a remote model.
        let grammar = match &request.constraint {
            _ if !request.functions.is_empty() => Some(Grammar::calls()),
            Constraint::OneOf(values) => Some(Grammar::one_of(values)),
            Constraint::Json => Some(Grammar::json()),
            Constraint::None => None,
        };
        let options = GenerateOptions {
            sampling,
            max_tokens: params.max_tokens.map(|m| m as usize),
            grammar,
            tools: calls::template_tools(&request.functions),
            cache_key: request.cache_key.clone(),
        };
        (chat_messages(&request.messages), options)
    }
}

/// A request's messages as a chat template takes them.
pub fn chat_messages(messages: &[Message]) -> Vec<ChatMessage> {
    messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool",
            };
            ChatMessage {
                tool_calls: calls::template_calls(&m.calls),
                ..ChatMessage::new(role, m.content.clone())
            }
        })
        .collect()
}

impl Engine for LocalEngine {
    fn generate(
        &self,
        request: &ChatRequest,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Completion, ProviderError> {
        let (messages, options) = self.options(request);
        let offers_functions = !options.tools.is_empty();
        // With functions offered, the calls are held back as they are written (see
        // `CallText`); `shown` is how much of the answer went out.
        let (mut held, mut shown) = (CallText::default(), 0);
        let mut pass_on = |text: &str| {
            let text =
                if offers_functions { Cow::Owned(held.push(text)) } else { Cow::Borrowed(text) };
            shown += text.len();
            text.is_empty() || on_text(&text)
        };
        let (events, received) = std::sync::mpsc::channel();
        let stopped = || ProviderError::MalformedStream("the local model's thread stopped".into());
        self.jobs.send(Job { messages, options, events }).map_err(|_| stopped())?;
        let generation = loop {
            match received.recv().map_err(|_| stopped())? {
                Event::Starting => {}
                Event::Text(text) => {
                    if !pass_on(&text) {
                        // Nobody listens: dropping `received` makes the model's thread cancel
                        // the answer at its next step.
                        return Err(ProviderError::MalformedStream(
                            "the request was dropped".into(),
                        ));
                    }
                }
                Event::Done(result) => {
                    break result.map_err(|e| match e {
                        LocalError::NoFunctions(_) => {
                            ProviderError::FunctionsUnavailable(e.to_string())
                        }
                        e => ProviderError::MalformedStream(e.to_string()),
                    })?;
                }
            }
        };
        let offered: Vec<&str> = request.functions.iter().map(|f| f.name.as_str()).collect();
        let calls = if offers_functions {
            calls::split_calls(&generation.text, &offered).1
        } else {
            Vec::new()
        };
        if calls.is_empty() && shown < generation.text.len() {
            // What was held back is no call after all: it is part of the answer.
            on_text(&generation.text[shown..]);
        }
        let stats = serde_json::json!({
            "model": self.name,
            "load_ms": millis(self.load_time),
            "prompt_ms": millis(generation.prompt_time),
            "decode_ms": millis(generation.decode_time),
            "tokens_per_second": (generation.tokens_per_second * 10.0).round() / 10.0,
            "peak_memory_bytes": peak_memory(),
        });
        Ok(Completion {
            usage: Usage {
                input_tokens: Some(generation.prompt_tokens as u64),
                // The start of the prompt its last turn computed (a conversation's history).
                cached_input_tokens: Some(generation.reused_tokens as u64),
                output_tokens: Some(generation.generated_tokens as u64),
                ..Usage::default()
            },
            finish_reason: Some(generation.finish_reason),
            time_to_first_token: Some(generation.prompt_time),
            retries: 0,
            engine_stats: Some(stats),
            calls,
        })
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The process's peak resident memory (Linux `VmHWM`), if known.
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_run_without_a_seed_draws_one_and_a_given_seed_wins() {
        assert_eq!(super::seed_of(Some(7), Some(9)), 7);
        assert_eq!(super::seed_of(None, Some(9)), 9);
        let drawn: std::collections::HashSet<u64> =
            (0..8).map(|_| super::seed_of(None, None)).collect();
        assert!(drawn.len() > 1, "every run the same seed: {drawn:?}");
    }
}
