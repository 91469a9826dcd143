//! The run loop: send a rendered prompt, enforce the tool's expected output on the answer, and
//! ask again with the reason when it falls short.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument as _;

use llmtool_dlp::Redaction;
use llmtool_format::chat::{self, Turn};
use llmtool_format::output::{self, OutputFormat, OutputKind, OutputSpec};
use serde::Serialize;

use crate::backend::{Backend, generate_local};
use crate::batch_api::Answer;
use crate::client::{build_request, decoder_factory};
use crate::error::ProviderError;
use crate::event::Usage;
use crate::functions::{Functions, Tally};
use crate::http::HttpRequest;
use crate::pricing::{Billing, PriceEntry};
use crate::redact::Redactor;
use crate::request::{ChatRequest, Constraint, Message, Params};
use crate::resolve::Target;
use crate::transport::Delivery;

/// How a run behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    pub stream: bool,
    /// How many times to ask again when the answer misses the expected output.
    pub max_repairs: u32,
    /// Keep a code answer whole instead of extracting its fenced block.
    pub raw: bool,
    /// Whether the caller shows text as it arrives (then a failure after the first piece is not
    /// retried); otherwise the answer is delivered whole and any failure may be retried.
    pub live: bool,
}

impl RunOptions {
    /// The answer delivered whole, asking again twice at most: what a server's tool call, a
    /// batch row and a test case ask for.
    pub const WHOLE: RunOptions =
        RunOptions { stream: false, max_repairs: 2, raw: false, live: false };

    /// The same, streamed to a caller that shows the text as it arrives when `stream`.
    pub const fn streamed(stream: bool) -> RunOptions {
        RunOptions { stream, live: stream, ..RunOptions::WHOLE }
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions::streamed(true)
    }
}

/// What a run produced, as `--format json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    /// The answer after enforcement; `None` when it never met the expected output.
    pub output: Option<String>,
    /// The model's last answer as received, with data-loss prevention's placeholders restored.
    pub raw: String,
    pub model: String,
    pub provider: String,
    pub usage: Usage,
    /// In US dollars; `None` when the model is unpriced or its usage was not reported.
    pub cost: Option<f64>,
    /// The price the cost was computed at: its entry, its source and its prices per token.
    pub price: Option<PriceEntry>,
    pub latency_ms: u64,
    pub time_to_first_token_ms: Option<u64>,
    pub finish_reason: Option<String>,
    /// How many times the model was asked again.
    pub repairs: u32,
    /// Why the answer was rejected, when it was.
    pub error: Option<String>,
    /// Parameters the provider could not take (dropped or changed).
    pub warnings: Vec<String>,
    /// How many sensitive values were swapped for placeholders before the prompt was sent,
    /// by kind; never the values.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub redactions: BTreeMap<String, usize>,
    /// For the local model: load time, tokens per second and peak memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<serde_json::Value>,
    /// For an image tool: the prompt as the model rewrote it, when the API says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revised_prompt: Option<String>,
    /// For an image tool: the pictures, as received (never serialized: the runtime saves them,
    /// or hands them back to a server's client).
    #[serde(skip)]
    pub pictures: Vec<crate::images::Picture>,
    /// For an image tool: what each picture is, once the runtime saved it or set it aside to
    /// hand back (never its bytes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<crate::images::SavedImage>,
    /// The functions the model called on the way to its answer, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<crate::functions::Call>,
    /// Data-loss prevention's placeholders at the end of the run: the request's, and those
    /// function results added (kept with a conversation, so that its owner reads the values).
    #[serde(skip)]
    pub placeholders: Placeholders,
}

/// Placeholders and the values they stand for. They hold the values, so they are never
/// serialized, and their `Debug` says only how many there are.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Placeholders(pub BTreeMap<String, String>);

impl Placeholders {
    /// The placeholders of `redaction`.
    pub fn of(redaction: &Redaction) -> Placeholders {
        let pairs = redaction.placeholders().into_iter();
        Placeholders(pairs.map(|(p, v)| (p.to_owned(), v.to_owned())).collect())
    }
}

impl std::fmt::Debug for Placeholders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Placeholders").field(&self.0.len()).finish()
    }
}

/// Everything a run needs besides the transport.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub target: Target,
    /// The earlier turns of the conversation this request goes on with, as they were sent
    /// (the tool's prompt first, each answer after its question); empty for a tool's own run.
    pub history: Vec<Message>,
    /// What is asked now: the tool's rendered prompt, or a follow-up's text.
    pub prompt: String,
    /// Whether `prompt` is a chat's turns written out (a chat tool's rendered prompt, see
    /// `llmtool_format::chat`), sent as its messages; else it is one user message.
    pub chat: bool,
    pub params: Params,
    pub spec: OutputSpec,
    /// The model's price; `None` when it is unpriced.
    pub price: Option<PriceEntry>,
    /// The placeholders data-loss prevention put in `prompt`, to be put back in the answer
    /// (`llmtool-runtime` does both); `None` when nothing was swapped.
    pub redaction: Option<Arc<Redaction>>,
    /// What the user should hear before the request is sent (data-loss prevention's findings
    /// under its `warn` policy), for the caller to show.
    pub notices: Vec<String>,
    /// The configured secrets (providers' keys, a server's token), hidden from the answer and
    /// from every piece of it streamed: a provider that echoes a key back gets it shown to
    /// nobody.
    pub secrets: Redactor,
    /// Whether the provider should cache what is sent (see [`ChatRequest::cache`]): asked when
    /// a follow-up is likely or under way.
    pub cache: bool,
    /// The conversation the request is a turn of (see [`ChatRequest::cache_key`]).
    pub cache_key: Option<String>,
    /// The functions the model may call, and who answers them; `None` offers none.
    pub functions: Option<Functions>,
}

/// Characters per token in the estimate of a prompt's tokens when no tokenizer of the model is
/// at hand: the usual figure for English text with the tokenizers of the large providers.
pub const CHARACTERS_PER_TOKEN: usize = 4;

/// The tokens `messages` take, estimated from their characters (see
/// [`CHARACTERS_PER_TOKEN`]).
pub fn estimated_tokens(messages: &[Message]) -> u64 {
    let characters: usize = messages.iter().map(|m| m.content.chars().count()).sum();
    characters.div_ceil(CHARACTERS_PER_TOKEN) as u64
}

/// The most output tokens one picture is counted as: OpenAI's GPT image models count a
/// 1536x1024 picture at high quality as 6,240 (their most), Gemini's image models a 4K
/// picture as 2,000. A worst case for what an image tool's run may cost.
pub const MOST_PICTURE_TOKENS: u64 = 6240;

impl RunRequest {
    /// What `usage` costs at the run's price and `billing`; `None` when the model is unpriced
    /// or its usage was not reported.
    pub(crate) fn cost(&self, usage: &Usage, billing: Billing) -> Option<f64> {
        Some(self.price.as_ref()?.price.cost(&usage.tokens()?, billing))
    }

    /// What an image tool's run that made `pictures` pictures and reported `usage` costs
    /// ([`crate::pricing::Price::image_cost`]); `None` when the model is unpriced, or neither
    /// its tokens nor its pictures are.
    pub(crate) fn image_cost(&self, usage: &Usage, pictures: usize) -> Option<f64> {
        let pictures = u64::try_from(pictures).unwrap_or(u64::MAX);
        self.price.as_ref()?.price.image_cost(usage.tokens().as_ref(), pictures)
    }

    /// The first request of the run, as it will be sent (for `--dry-run`): an image tool's
    /// to the image API (an error where the API makes no pictures).
    pub fn first_request(
        &self,
        options: RunOptions,
    ) -> Result<(HttpRequest, Vec<String>), ProviderError> {
        if let OutputKind::Image(spec) = &self.spec.kind {
            let mut warnings = Vec::new();
            let http = crate::images::build(
                &self.target.endpoint,
                &crate::images::ImageRequest::of(self, spec),
                &mut warnings,
            )?;
            return Ok((http, warnings));
        }
        Ok(build_request(&self.target.endpoint, &self.chat(self.messages(), options)))
    }

    /// The messages of the first request: the conversation so far, then what is asked now.
    pub fn messages(&self) -> Vec<Message> {
        let mut messages = self.history.clone();
        messages.extend(self.asked().iter().map(Message::of_turn));
        messages
    }

    /// What is asked now as turns: a chat's, or the prompt as one user turn; with an
    /// instruction at the end of the last user turn when the expected output is a fixed set of
    /// answers or JSON that the prompt does not already ask for.
    fn asked(&self) -> Vec<Turn> {
        let mut turns = if self.chat {
            chat::split(&self.prompt)
        } else {
            vec![Turn::new(chat::USER, self.prompt.clone())]
        };
        let asks_json = self.prompt.to_lowercase().contains("json");
        let instruction = match (&self.spec.kind, &self.spec.format) {
            (OutputKind::Limited { allowed }, _) if !allowed.is_empty() => {
                format!("Answer with exactly one of: {}.", allowed.join(", "))
            }
            (_, Some(OutputFormat::Json)) if !asks_json => "Answer with JSON only.".to_owned(),
            _ => return turns,
        };
        match turns.iter_mut().rev().find(|turn| turn.role == chat::USER) {
            Some(turn) => {
                if !turn.text.is_empty() {
                    turn.text.push_str("\n\n");
                }
                turn.text.push_str(&instruction);
            }
            None => turns.push(Turn::new(chat::USER, instruction)),
        }
        turns
    }

    fn chat(&self, messages: Vec<Message>, options: RunOptions) -> ChatRequest {
        ChatRequest {
            model: self.target.model.clone(),
            messages,
            params: self.params.for_chat(),
            constraint: Constraint::of(&self.spec),
            stream: options.stream,
            cache: self.cache,
            cache_key: self.cache_key.clone(),
            functions: self.functions.as_ref().map(|f| f.specs.clone()).unwrap_or_default(),
        }
    }

    /// The prompt as an image API takes it, one text: a chat's turns, without their role
    /// lines, a blank line between two.
    pub fn image_prompt(&self) -> String {
        if !self.chat {
            return self.prompt.clone();
        }
        let texts: Vec<String> =
            chat::split(&self.prompt).into_iter().map(|turn| turn.text).collect();
        texts.join("\n\n")
    }

    /// What is asked now as one text (what the run log keeps, a judge reads): the prompt with
    /// its instruction (see [`RunRequest::messages`]), a chat's turns written out.
    pub fn first_message(&self) -> String {
        let turns = self.asked();
        match turns.as_slice() {
            [turn] if !self.chat => turn.text.clone(),
            _ => chat::join(&turns),
        }
    }

    /// `answer` as it is shown: the placeholders of data-loss prevention put back, and the
    /// configured secrets hidden.
    pub fn restore(&self, answer: &str) -> String {
        self.restore_with(self.redaction.as_deref(), answer)
    }

    /// The same, with the placeholders of `redaction` (the request's, grown by the values
    /// hidden in function results).
    fn restore_with(&self, redaction: Option<&Redaction>, answer: &str) -> String {
        let restored = match redaction {
            Some(redaction) => redaction.restore(answer),
            None => std::borrow::Cow::Borrowed(answer),
        };
        self.secrets.hide_secrets(&restored).into_owned()
    }

    /// How many values were swapped for placeholders, by kind.
    pub fn redaction_counts(&self) -> BTreeMap<String, usize> {
        self.redaction.as_ref().map(|r| r.counts().clone()).unwrap_or_default()
    }

    /// The request as one of a provider's batch (see [`crate::batch_api`]): its messages,
    /// answered whole.
    pub fn batch_request(&self) -> ChatRequest {
        self.chat(self.messages(), RunOptions::WHOLE)
    }

    /// The report of `answer`, from a provider's batch engine: the expected output enforced
    /// (a batch cannot ask again, so an answer that misses it is rejected), the cost at the
    /// batch price.
    pub fn batch_report(&self, answer: &Answer) -> RunReport {
        let shown = self.restore(&answer.text);
        let (output, rejection) = match output::enforce(&self.spec, &shown, false) {
            Ok(output) => (Some(output), None),
            Err(error) => (None, Some(error.to_string())),
        };
        RunReport {
            output,
            raw: shown,
            model: self.target.model.clone(),
            provider: self.target.endpoint.provider.clone(),
            usage: answer.usage,
            cost: self.cost(&answer.usage, Billing::Batch),
            price: self.price.clone(),
            latency_ms: 0,
            time_to_first_token_ms: None,
            finish_reason: answer.finish_reason.clone(),
            repairs: 0,
            error: rejection,
            warnings: Vec::new(),
            redactions: self.redaction_counts(),
            local: None,
            revised_prompt: None,
            pictures: Vec::new(),
            images: Vec::new(),
            calls: Vec::new(),
            placeholders: Placeholders::default(),
        }
    }

    /// Whether the answer is shown as it streams: only when it is printed unchanged.
    fn streams_through(&self, options: RunOptions) -> bool {
        let unchanged_kind = match &self.spec.kind {
            OutputKind::Text | OutputKind::Other(_) => true,
            OutputKind::Code { .. } => options.raw,
            OutputKind::Limited { .. } | OutputKind::Image(_) => false,
        };
        let unchanged_format = matches!(self.spec.format, None | Some(OutputFormat::Other(_)));
        options.stream && options.live && unchanged_kind && unchanged_format
    }
}

/// Runs `run`, calling `on_text` with answer text as it arrives when the answer is printed
/// unchanged (plain text); otherwise the enforced output is in the report.
pub async fn run(
    backend: &Backend<'_>,
    run: &RunRequest,
    options: RunOptions,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<RunReport, ProviderError> {
    if let OutputKind::Image(spec) = &run.spec.kind {
        return crate::images::generate(backend, run, spec).await;
    }
    let started = Instant::now();
    let discovered;
    let run = match &run.functions {
        Some(functions) => {
            let more =
                functions.host.discovered().await.map_err(ProviderError::FunctionsUnavailable)?;
            if more.is_empty() {
                run
            } else {
                let mut functions = functions.clone();
                functions.specs.extend(more);
                discovered = RunRequest { functions: Some(functions), ..run.clone() };
                &discovered
            }
        }
        None => run,
    };
    let endpoint = &run.target.endpoint;
    let streams_through = run.streams_through(options);
    let delivery = if streams_through { Delivery::Live } else { Delivery::Whole };
    let mut messages = run.messages();
    let mut usage = Usage::default();
    let mut repairs = 0;
    let mut first_token: Option<Duration> = None;
    // The placeholders of data-loss prevention: the request's, and any that function results
    // add. They go back into what is shown and checked, and the configured secrets are hidden
    // from it; the model keeps seeing its own words (with the placeholders) when asked again.
    let mut redaction = run.redaction.clone();
    let mut hider = run.secrets.stream();
    let mut tally = None;
    let mut calls = Vec::new();
    let mut rounds = 0u32;
    loop {
        let first_round = rounds == 0;
        rounds += 1;
        let request = run.chat(messages.clone(), options);
        let mut answer = String::new();
        let mut restorer = redaction.as_deref().map(Redaction::restorer);
        let mut forward = |text: &str| {
            answer.push_str(text);
            if streams_through {
                let with_values = match restorer.as_mut() {
                    Some(restorer) => std::borrow::Cow::Owned(restorer.push(text)),
                    None => std::borrow::Cow::Borrowed(text),
                };
                show(on_text, &hider.push(&with_values));
            }
        };
        let span = crate::trace::chat_span(endpoint, &request);
        let called = async {
            match backend {
                Backend::Http(transport) => {
                    let (http, warnings) = build_request(endpoint, &request);
                    let decoder = decoder_factory(endpoint, &request);
                    let sent =
                        transport.send(&http, request.stream, delivery, &*decoder, &mut forward);
                    Ok((sent.await?, warnings))
                }
                Backend::Local(engine) => Ok((
                    generate_local(engine, &request, delivery, &mut forward).await?,
                    Vec::new(),
                )),
            }
        };
        let called: Result<_, ProviderError> = called.instrument(span.clone()).await;
        let (completion, warnings) = match called {
            Ok(called) => called,
            Err(error) => {
                crate::trace::record_failure(&span);
                return Err(error);
            }
        };
        let finish = completion.finish_reason.as_deref();
        crate::trace::record_answer(&span, &request.model, &completion.usage, finish, &answer);
        if streams_through {
            if let Some(restorer) = restorer.as_mut() {
                let rest = restorer.finish();
                show(on_text, &hider.push(&rest));
            }
            show(on_text, &hider.finish());
        }
        usage.add(completion.usage);
        if first_round {
            first_token = completion.time_to_first_token;
        }
        if let Some(functions) = &run.functions
            && !completion.calls.is_empty()
        {
            // The model asked for functions: answer each, and ask again with the results.
            let tally = tally.get_or_insert_with(|| Tally::new(&functions.limits));
            let asked = completion.calls;
            let answered =
                crate::functions::answer(functions, &asked, tally, &mut redaction).await?;
            messages.push(Message::calling(answer, asked.clone()));
            for (call, (content, record)) in asked.iter().zip(answered) {
                messages.push(Message::result(call, content, record.failed));
                calls.push(record);
            }
            continue;
        }
        let shown = run.restore_with(redaction.as_deref(), &answer);
        let (output, rejection) = match output::enforce(&run.spec, &shown, options.raw) {
            Ok(output) => (Some(output), None),
            Err(error) => (None, Some(error)),
        };
        match rejection {
            Some(error) if repairs < options.max_repairs => {
                messages.push(Message::assistant(answer));
                messages.push(Message::user(error.reason()));
            }
            rejection => {
                let redactions = redaction.as_ref().map(|r| r.counts().clone()).unwrap_or_default();
                return Ok(RunReport {
                    output,
                    raw: shown,
                    model: run.target.model.clone(),
                    provider: endpoint.provider.clone(),
                    usage,
                    cost: run.cost(&usage, Billing::Standard),
                    price: run.price.clone(),
                    latency_ms: millis(started.elapsed()),
                    time_to_first_token_ms: first_token.map(millis),
                    finish_reason: completion.finish_reason,
                    repairs,
                    error: rejection.map(|e| e.to_string()),
                    warnings,
                    redactions,
                    local: completion.engine_stats,
                    revised_prompt: None,
                    pictures: Vec::new(),
                    images: Vec::new(),
                    calls,
                    placeholders: redaction.as_deref().map(Placeholders::of).unwrap_or_default(),
                });
            }
        }
        repairs += 1;
    }
}

/// Passes `text` on, unless there is none (a restorer holding a partial placeholder back).
fn show(on_text: &mut (dyn FnMut(&str) + Send), text: &str) {
    if !text.is_empty() {
        on_text(text);
    }
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
