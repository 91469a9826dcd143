//! Data-loss prevention for llmtool: finds sensitive values in text (e-mail addresses, phone
//! numbers, payment cards, IBANs, national ids, IP addresses, credentials in URLs, private
//! keys, API keys and tokens, and whatever the config adds) and swaps them for typed
//! placeholders (`[EMAIL_1]`) that are put back in the model's answer.
//!
//! Pure: no I/O. [`Scanner`] finds, [`Redaction`] swaps and restores (whole texts, or a stream
//! of chunks through a [`Restorer`]), [`Policy`] says what a run does with what was found.
//! Running this on every request is `llmtool-runtime`'s job.

mod builtin;
mod checksums;
mod config;
mod kind;
mod locate;
mod redact;
mod scanner;
mod secrets;

pub use config::{Config, ConfigError, CustomRule, Policy, WordList};
pub use kind::{Confidence, Finding, Kind};
pub use locate::{Lines, Location, locate};
pub use redact::{Redaction, Restorer};
pub use scanner::Scanner;
