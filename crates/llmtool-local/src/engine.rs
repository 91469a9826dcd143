//! Generating an answer: the prompt through the model once, then one token at a time, each
//! chosen by the sampler under the output constraint, streamed as text as it is decoded.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::LocalError;
use crate::chat::ChatMessage;
use crate::constrain::Grammar;
use crate::model::LocalModel;
use crate::sampler::{Sampler, Sampling};

/// How to generate.
#[derive(Debug, Clone, Default)]
pub struct GenerateOptions {
    pub sampling: Sampling,
    /// The most tokens to generate (`None`: until the end of the context).
    pub max_tokens: Option<usize>,
    pub grammar: Option<Grammar>,
}

/// What a generation produced, with its timings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Generation {
    pub text: String,
    pub prompt_tokens: usize,
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

impl LocalModel {
    /// Answers `messages`, calling `on_text` with each piece of text as it is decoded.
    pub fn generate(
        &mut self,
        messages: &[ChatMessage],
        options: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Generation, LocalError> {
        let prompt = self.chat.render(messages)?;
        let encoding =
            self.tokenizer.encode(prompt, false).map_err(|e| LocalError::Model(e.to_string()))?;
        let prompt_tokens = encoding.get_ids().to_vec();
        if prompt_tokens.is_empty() || prompt_tokens.len() >= self.context_length {
            return Err(LocalError::Model(format!(
                "the prompt takes {} tokens; the model's context holds {}",
                prompt_tokens.len(),
                self.context_length
            )));
        }
        let room = self.context_length - prompt_tokens.len();
        let max_tokens = options.max_tokens.unwrap_or(room).min(room);
        let mut sampler = Sampler::new(options.sampling, self.vocab_size);
        let mut constraint = options.grammar.clone();
        let mut mask = vec![true; self.vocab_size];

        let started = Instant::now();
        let mut logits = self.logits(&prompt_tokens, 0)?;
        let prompt_time = started.elapsed();
        let decode_started = Instant::now();
        let mut generated: Vec<u32> = Vec::new();
        // The answer's bytes (byte-level BPE: each token stands for fixed bytes), and how many
        // of them went out; text is emitted once it forms whole UTF-8 characters.
        let mut bytes: Vec<u8> = Vec::new();
        let mut emitted = 0usize;
        let mut finish_reason = "length";
        while generated.len() < max_tokens {
            let allowed = match &constraint {
                Some(constraint) => {
                    constraint.mask(self.vocab(), &self.eos_tokens, &mut mask);
                    Some(mask.as_slice())
                }
                None => None,
            };
            let Some(token) = sampler.pick(&mut logits, allowed) else {
                finish_reason = "stop";
                break;
            };
            if self.eos_tokens.contains(&token) {
                finish_reason = "stop";
                break;
            }
            generated.push(token);
            if let Some(constraint) = &mut constraint {
                constraint.advance(&self.vocab()[token as usize]);
            }
            bytes.extend_from_slice(&self.vocab_bytes[token as usize]);
            let whole = match std::str::from_utf8(&bytes[emitted..]) {
                Ok(new) => new.len(),
                Err(error) => error.valid_up_to(),
            };
            if whole > 0 {
                on_text(std::str::from_utf8(&bytes[emitted..emitted + whole]).unwrap_or_default());
                emitted += whole;
            }
            if generated.len() >= max_tokens {
                break;
            }
            logits = self.logits(&[token], prompt_tokens.len() + generated.len() - 1)?;
        }
        let mut rest = String::from_utf8_lossy(&bytes[emitted..]).into_owned();
        if finish_reason == "length"
            && let Some(constraint) = constraint.as_ref().filter(|c| !c.complete())
        {
            // Out of budget mid-document: finish it, so that a JSON answer always parses.
            rest.push_str(&constraint.closing());
        }
        if !rest.is_empty() {
            on_text(&rest);
        }
        let text = String::from_utf8_lossy(&bytes[..emitted]).into_owned() + &rest;
        let decode_time = decode_started.elapsed();
        let tokens_per_second = if decode_time.is_zero() {
            0.0
        } else {
            generated.len() as f64 / decode_time.as_secs_f64()
        };
        Ok(Generation {
            text,
            prompt_tokens: prompt_tokens.len(),
            generated_tokens: generated.len(),
            finish_reason: finish_reason.to_owned(),
            prompt_time,
            decode_time,
            tokens_per_second,
        })
    }
}
