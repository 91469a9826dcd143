//! Generating an answer: the prompt through the model once, then one token at a time, each
//! chosen by the sampler under the output constraint, streamed as text as it is decoded.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::LocalError;
use crate::chat::ChatMessage;
use crate::constrain::Grammar;
use crate::llama::{Cache, Segment};
use crate::model::LocalModel;
use crate::sampler::{Sampler, Sampling};

/// The longest prompt (or prompt and answer) whose keys and values are kept for the next
/// prompt to start from (about 100 MB for the default model).
const MAX_KEPT_PROMPT: usize = 2048;

/// How many tokens prompts that come together must share beyond what the last prompt gives
/// them before their shared start is run once for all.
const MIN_SHARED: usize = 8;

/// How many tokens `a` and `b` start with alike.
fn shared(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(a, b)| a == b).count()
}

/// Positions whose keys and values are kept for the next prompt to start from.
#[derive(Debug)]
pub(crate) struct Kept {
    tokens: Vec<u32>,
    cache: Cache,
    /// When they hold an answer: whose (the answer's `cache_key`), and how many positions,
    /// the prompt's, anyone may start from. Another caller's prompt never starts from someone's
    /// answer, so neither its time nor its usage can tell what that answer said.
    private: Option<(String, usize)>,
}

/// How to generate.
#[derive(Debug, Clone, Default)]
pub struct GenerateOptions {
    pub sampling: Sampling,
    /// The most tokens to generate (`None`: until the end of the context).
    pub max_tokens: Option<usize>,
    pub grammar: Option<Grammar>,
    /// The functions the model may call, as its chat template takes them (see
    /// [`crate::calls`]); none for most runs.
    pub tools: Vec<serde_json::Value>,
    /// Whose answer this is (a conversation's id): its keys and values are kept for that
    /// conversation's next turn, and for no one else's. `None`: the answer is not kept.
    pub cache_key: Option<String>,
}

/// What a generation produced, with its timings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Generation {
    pub text: String,
    pub prompt_tokens: usize,
    /// Of the prompt's tokens, those whose keys and values were copied, not computed: from
    /// the prompt or answer kept before (a conversation's earlier turns), or from a prompt
    /// that came with it.
    pub reused_tokens: usize,
    pub generated_tokens: usize,
    /// `stop` (an end token, or the constraint complete) or `length`.
    pub finish_reason: String,
    #[serde(serialize_with = "millis")]
    pub prompt_time: Duration,
    #[serde(serialize_with = "millis")]
    pub decode_time: Duration,
    /// Generated tokens per second of decoding.
    pub tokens_per_second: f64,
}

fn millis<S: serde::Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(duration.as_secs_f64() * 1000.0)
}

/// One answer being generated: its prompt and cache, its sampler and constraint, and what it
/// has produced so far. Several run together through [`LocalModel::prefill`] and
/// [`LocalModel::step`]; [`LocalModel::generate`] runs one alone.
#[derive(Debug)]
pub struct Sequence {
    cache: Cache,
    /// Positions of the prompt already in `cache` (copied from a prompt that shares them).
    cache_len: usize,
    /// Of those, the ones copied from the prompt or answer kept before.
    reused: usize,
    prompt: Vec<u32>,
    /// Whose conversation it is, if any ([`GenerateOptions::cache_key`]).
    cache_key: Option<String>,
    max_tokens: usize,
    sampler: Sampler,
    constraint: Option<Grammar>,
    mask: Vec<bool>,
    /// The scores of the next token, once the prompt has run.
    logits: Vec<f32>,
    generated: Vec<u32>,
    /// The answer's bytes (byte-level BPE: each token stands for fixed bytes), and how many
    /// of them went out; text goes out once it forms whole UTF-8 characters.
    bytes: Vec<u8>,
    emitted: usize,
    finish_reason: Option<&'static str>,
    prompt_time: Duration,
    decode_started: Option<Instant>,
}

impl Sequence {
    /// Whether it has its whole answer.
    pub fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// How many positions its cache will hold at most (prompt and answer).
    pub fn reserved_tokens(&self) -> usize {
        self.prompt.len() + self.max_tokens
    }

    /// Stops it where it is (its client left).
    pub fn cancel(&mut self) {
        self.finish_reason.get_or_insert("cancelled");
    }

    /// Picks the next token (the end, or one more of the answer, whose new whole characters
    /// go to `on_text`); the token to run next, if the answer goes on.
    fn pick(&mut self, model: &LocalModel, on_text: &mut dyn FnMut(&str)) -> Option<u32> {
        if self.generated.len() >= self.max_tokens {
            self.finish_reason = Some("length");
            return None;
        }
        let allowed = match &self.constraint {
            Some(constraint) if !constraint.is_free() => {
                constraint.mask(model.vocab(), &model.eos_tokens, &mut self.mask);
                Some(self.mask.as_slice())
            }
            _ => None,
        };
        let token = match self.sampler.pick(&mut self.logits, allowed) {
            Some(token) if !model.eos_tokens.contains(&token) => token,
            _ => {
                self.finish_reason = Some("stop");
                return None;
            }
        };
        self.generated.push(token);
        if let Some(constraint) = &mut self.constraint {
            constraint.advance(&model.vocab()[token as usize]);
        }
        self.bytes.extend_from_slice(&model.vocabulary.bytes[token as usize]);
        let whole = match std::str::from_utf8(&self.bytes[self.emitted..]) {
            Ok(new) => new.len(),
            Err(error) => error.valid_up_to(),
        };
        if whole > 0 {
            let text = &self.bytes[self.emitted..self.emitted + whole];
            on_text(std::str::from_utf8(text).unwrap_or_default());
            self.emitted += whole;
        }
        if self.generated.len() >= self.max_tokens {
            self.finish_reason = Some("length");
            return None;
        }
        Some(token)
    }

    /// The finished answer; the rest of its text goes to `on_text` (a JSON answer cut short by
    /// its budget is closed, so that it always parses).
    pub fn into_generation(self, on_text: &mut dyn FnMut(&str)) -> Generation {
        let finish_reason = self.finish_reason.unwrap_or("length");
        let mut rest = String::from_utf8_lossy(&self.bytes[self.emitted..]).into_owned();
        if finish_reason == "length"
            && let Some(constraint) = self.constraint.as_ref().filter(|c| !c.complete())
        {
            rest.push_str(&constraint.closing());
        }
        if !rest.is_empty() {
            on_text(&rest);
        }
        let text = String::from_utf8_lossy(&self.bytes[..self.emitted]).into_owned() + &rest;
        let decode_time = self.decode_started.map(|s| s.elapsed()).unwrap_or_default();
        let tokens_per_second = if decode_time.is_zero() {
            0.0
        } else {
            self.generated.len() as f64 / decode_time.as_secs_f64()
        };
        Generation {
            text,
            prompt_tokens: self.prompt.len(),
            reused_tokens: self.reused,
            generated_tokens: self.generated.len(),
            finish_reason: finish_reason.to_owned(),
            prompt_time: self.prompt_time,
            decode_time,
            tokens_per_second,
        }
    }
}

impl LocalModel {
    /// Answers `messages`, calling `on_text` with each piece of text as it is decoded.
    pub fn generate(
        &mut self,
        messages: &[ChatMessage],
        options: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Generation, LocalError> {
        let mut sequence = self.sequence(messages, options)?;
        self.prefill(&mut [&mut sequence])?;
        while !sequence.finished() {
            self.step(&mut [&mut sequence], &mut |_, text| on_text(text))?;
        }
        self.keep_finished(&sequence);
        Ok(sequence.into_generation(on_text))
    }

    /// A sequence for `messages`, its prompt not run yet.
    pub fn sequence(
        &self,
        messages: &[ChatMessage],
        options: &GenerateOptions,
    ) -> Result<Sequence, LocalError> {
        if !options.tools.is_empty() && !self.chat.takes_tools() {
            return Err(LocalError::NoFunctions(self.name.clone()));
        }
        let prompt = self.chat.render(messages, &options.tools)?;
        let prompt = self.vocabulary.encode(&prompt)?;
        if prompt.is_empty() || prompt.len() >= self.context_length {
            return Err(LocalError::Model(format!(
                "the prompt takes {} tokens; the model's context holds {}",
                prompt.len(),
                self.context_length
            )));
        }
        let room = self.context_length - prompt.len();
        Ok(Sequence {
            cache: self.weights.cache(),
            cache_len: 0,
            reused: 0,
            prompt,
            cache_key: options.cache_key.clone(),
            max_tokens: options.max_tokens.unwrap_or(room).min(room),
            sampler: Sampler::new(options.sampling, self.vocab_size),
            constraint: options.grammar.clone(),
            mask: vec![true; self.vocab_size],
            logits: Vec::new(),
            generated: Vec::new(),
            bytes: Vec::new(),
            emitted: 0,
            finish_reason: None,
            prompt_time: Duration::ZERO,
            decode_started: None,
        })
    }

    /// Runs the prompts of `sequences` in one pass. Each starts from the part of its prompt
    /// it shares with the last prompt run (those positions' keys and values are copied, not
    /// computed again: they are the same numbers, since a position sees only the ones before
    /// it).
    pub fn prefill(&mut self, sequences: &mut [&mut Sequence]) -> Result<(), LocalError> {
        let started = Instant::now();
        // Prompts that come together share their start too (the tool's text before its first
        // variable): the first one runs it, and the others copy it.
        let common = sequences.split_first().map_or(0, |(first, rest)| {
            rest.iter()
                .map(|s| shared(&first.prompt, &s.prompt))
                .min()
                .unwrap_or(0)
                .min(first.prompt.len() - 1)
        });
        if sequences.len() > 1 && common > self.reusable(sequences[0]) + MIN_SHARED {
            let (first, _) = sequences.split_first_mut().unwrap_or_else(|| unreachable!());
            let start = self.start_from_last(first);
            let mut segment = Segment {
                cache: &mut first.cache,
                tokens: &first.prompt[start..common],
                position: start,
            };
            self.weights.forward(std::slice::from_mut(&mut segment))?;
            first.cache_len = common;
            self.last_prompt = Some(Kept {
                tokens: first.prompt[..common].to_vec(),
                cache: self.weights.cache_prefix(&first.cache, common),
                private: None,
            });
        }
        let starts: Vec<usize> = sequences.iter_mut().map(|s| self.start_from_last(s)).collect();
        let mut segments: Vec<Segment<'_>> = sequences
            .iter_mut()
            .zip(&starts)
            .map(|(s, &start)| Segment {
                cache: &mut s.cache,
                tokens: &s.prompt[start..],
                position: start,
            })
            .collect();
        let logits = self.weights.forward(&mut segments)?;
        let prompt_time = started.elapsed();
        for (sequence, mut logits) in sequences.iter_mut().zip(logits) {
            logits.truncate(self.vocab_size);
            sequence.logits = logits;
            sequence.prompt_time = prompt_time;
            sequence.decode_started = Some(Instant::now());
        }
        if let Some(last) = sequences.last().filter(|s| s.prompt.len() <= MAX_KEPT_PROMPT) {
            let cache = self.weights.cache_prefix(&last.cache, last.prompt.len());
            self.last_prompt = Some(Kept { tokens: last.prompt.clone(), cache, private: None });
        }
        Ok(())
    }

    /// Keeps the keys and values of `sequence`, finished, for the next prompt to start from:
    /// the next turn of a conversation sends this prompt and this answer again, so only what
    /// it adds (the end of the answer's turn, the follow-up) is computed. Only an answer with a
    /// `cache_key` is kept, for that key alone; a cancelled answer is not kept.
    pub fn keep_finished(&mut self, sequence: &Sequence) {
        let Some(key) = &sequence.cache_key else { return };
        if sequence.finish_reason == Some("cancelled") {
            return;
        }
        // The prompt and every token picked but the last, which may not have run (a token
        // runs when the next one is asked for).
        let positions = sequence.prompt.len() + sequence.generated.len().saturating_sub(1);
        if positions > MAX_KEPT_PROMPT || positions <= sequence.prompt.len() {
            return;
        }
        let mut tokens = Vec::with_capacity(positions);
        tokens.extend_from_slice(&sequence.prompt);
        tokens.extend_from_slice(&sequence.generated);
        tokens.truncate(positions);
        let cache = self.weights.cache_prefix(&sequence.cache, positions);
        let private = Some((key.clone(), sequence.prompt.len()));
        self.last_prompt = Some(Kept { tokens, cache, private });
    }

    /// Forgets what the last prompt computed: the next prompt is computed whole (what a
    /// benchmark of the gain compares against).
    pub fn forget_last_prompt(&mut self) {
        self.last_prompt = None;
    }

    /// How many of the first tokens of `sequence`'s prompt the last prompt run has computed
    /// and it may start from (at most all but the last: the last token runs, for the scores of
    /// the next one; of another conversation's answer, none).
    fn reusable(&self, sequence: &Sequence) -> usize {
        let prompt = &sequence.prompt;
        self.last_prompt.as_ref().map_or(0, |kept| {
            let open_to = match &kept.private {
                Some((key, public)) if sequence.cache_key.as_ref() != Some(key) => *public,
                _ => kept.tokens.len(),
            };
            shared(&kept.tokens[..open_to], prompt).min(prompt.len() - 1)
        })
    }

    /// Gives `sequence` the keys and values of the start it shares with the last prompt run
    /// (unless it has more of its own already): where its prompt goes on from.
    fn start_from_last(&self, sequence: &mut Sequence) -> usize {
        let own = sequence.cache_len.min(sequence.prompt.len() - 1);
        let reusable = self.reusable(sequence);
        if reusable > own
            && let Some(kept) = &self.last_prompt
        {
            sequence.cache = self.weights.cache_prefix(&kept.cache, reusable);
            sequence.cache_len = reusable;
            sequence.reused = reusable;
            return reusable;
        }
        own
    }

    /// One token more of each unfinished sequence: picked (its new text to `on_text` with the
    /// sequence's place in `sequences`), then run through the model together with the others.
    pub fn step(
        &mut self,
        sequences: &mut [&mut Sequence],
        on_text: &mut dyn FnMut(usize, &str),
    ) -> Result<(), LocalError> {
        let mut running: Vec<(&mut Sequence, [u32; 1])> = Vec::with_capacity(sequences.len());
        for (index, sequence) in sequences.iter_mut().enumerate() {
            if sequence.finished() {
                continue;
            }
            if let Some(token) = sequence.pick(self, &mut |text| on_text(index, text)) {
                running.push((&mut **sequence, [token]));
            }
        }
        let mut segments: Vec<Segment<'_>> = running
            .iter_mut()
            .map(|(s, token)| {
                let position = s.prompt.len() + s.generated.len() - 1;
                Segment { cache: &mut s.cache, tokens: token.as_slice(), position }
            })
            .collect();
        let logits = self.weights.forward(&mut segments)?;
        drop(segments);
        for ((sequence, _), mut logits) in running.into_iter().zip(logits) {
            logits.truncate(self.vocab_size);
            sequence.logits = logits;
        }
        Ok(())
    }
}
