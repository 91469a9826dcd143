//! Data-loss prevention on the shared run path: which policy a run follows (the command line's
//! `--dlp`, over the tool's `x-dlp`, over the config's `[dlp] policy`; off when none says), and
//! what it does to a rendered prompt before the request is built: report, swap for
//! placeholders, or stop the run. Every way of running a tool goes through
//! [`crate::Runtime::request_on`], so each honours it.

use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use llmtool_dlp::{Config, ConfigError, Finding, Lines, Policy, Redaction, Scanner};
use llmtool_format::model::Tool;

/// A runtime's data-loss prevention: the user's policy, the config, and the scanner built from
/// it on first use (a process that never scans never compiles its patterns).
#[derive(Debug)]
pub(crate) struct Guard {
    flag: Option<Policy>,
    config: Config,
    scanner: OnceLock<Scanner>,
}

/// What a prompt becomes under a policy.
#[derive(Debug)]
pub(crate) enum Guarded {
    /// Send it (as redacted, when a redaction is given), with what the user should hear.
    Send { prompt: String, redaction: Option<Arc<Redaction>>, notice: Option<String> },
    /// Do not send it: the located report of what was found.
    Blocked(String),
}

impl Guard {
    /// Checks the config now (a bad custom pattern is the user's error to hear at start).
    pub(crate) fn new(flag: Option<Policy>, config: Config) -> Result<Guard, ConfigError> {
        let scanner = OnceLock::new();
        if config != Config::default() {
            let _ = scanner.set(Scanner::new(&config)?);
        }
        Ok(Guard { flag, config, scanner })
    }

    fn scanner(&self) -> &Scanner {
        // `new` has built it from any config but the default, which always builds.
        self.scanner
            .get_or_init(|| Scanner::new(&self.config).unwrap_or_else(|_| Scanner::with_defaults()))
    }

    /// The policy a run of `tool` follows.
    pub(crate) fn policy(&self, tool: &Tool) -> Policy {
        self.policy_in(tool, None)
    }

    /// The policy a turn of a conversation of `tool` follows: the user's, else the stricter of
    /// the one the conversation started under (`kept`) and the tool's and the config's now (a
    /// policy an operator tightened since holds for old conversations too).
    pub(crate) fn policy_in(&self, tool: &Tool, kept: Option<Policy>) -> Policy {
        let of_tool = tool.dlp.as_ref().and_then(|p| p.value.parse::<Policy>().ok());
        let now = of_tool.or(self.config.policy).unwrap_or(Policy::Off);
        self.flag.unwrap_or_else(|| kept.map_or(now, |kept| kept.max(now)))
    }

    /// `prompt` as a run under `policy` may send it. A turn of a conversation gives the
    /// conversation's `earlier` placeholders: a value hidden before is hidden again wherever it
    /// appears (whether or not the scanner would find it here: a custom rule's context, a
    /// confidence that needed words around it), a new value takes the next placeholder, and
    /// the answer gets every one of them back. Under `block`, a value hidden before stops the
    /// turn as a new one would.
    pub(crate) fn apply(
        &self,
        policy: Policy,
        prompt: String,
        earlier: Option<Redaction>,
    ) -> Guarded {
        let earlier = earlier.filter(|redaction| !redaction.is_empty());
        let send = |prompt, notice| Guarded::Send {
            prompt,
            redaction: earlier.clone().map(Arc::new),
            notice,
        };
        if policy == Policy::Off {
            return send(prompt, None);
        }
        // The values hidden in earlier turns, hidden again before the scan.
        let (prompt, known) = match &earlier {
            Some(redaction) if policy >= Policy::Redact => {
                let masked = redaction.mask(&prompt);
                let known = masked != prompt;
                (masked, known)
            }
            _ => (prompt, false),
        };
        let findings = self.scanner().scan(&prompt);
        if policy == Policy::Block && known && findings.is_empty() {
            let said = "the follow-up holds a sensitive value hidden earlier in the conversation \
                        and was not sent";
            return Guarded::Blocked(said.to_owned());
        }
        if findings.is_empty() {
            return send(prompt, None);
        }
        match policy {
            Policy::Off => send(prompt, None),
            Policy::Warn => {
                let notice = report(&prompt, &findings, "is sent as it is (`--dlp warn`)");
                tracing::warn!("{notice}");
                send(prompt, Some(notice))
            }
            Policy::Redact => {
                let mut redaction = earlier.clone().unwrap_or_default();
                let prompt = redaction.redact(&prompt, &findings);
                Guarded::Send { prompt, redaction: Some(Arc::new(redaction)), notice: None }
            }
            Policy::Block => Guarded::Blocked(report(&prompt, &findings, "was not sent")),
        }
    }
}

impl Guard {
    /// A function's `result` as the model may read it under `policy`: the values hidden
    /// before hidden again, new ones given placeholders added to `redaction` (so that the
    /// answer gets them back), or, under `block`, withheld (the reason is returned).
    pub(crate) fn screen(
        &self,
        policy: Policy,
        result: String,
        redaction: &mut Redaction,
    ) -> Result<String, String> {
        if policy == Policy::Off {
            return Ok(result);
        }
        let result = if policy >= Policy::Redact { redaction.mask(&result) } else { result };
        let findings = self.scanner().scan(&result);
        if findings.is_empty() {
            return Ok(result);
        }
        match policy {
            Policy::Off => Ok(result),
            Policy::Warn => {
                tracing::warn!("a function's result holds {} sensitive values", findings.len());
                Ok(result)
            }
            Policy::Redact => Ok(redaction.redact(&result, &findings)),
            Policy::Block => {
                let mut kinds: Vec<&str> = findings.iter().map(|f| f.kind.describe()).collect();
                kinds.dedup();
                Err(format!(
                    "the result holds {} sensitive value(s) ({})",
                    findings.len(),
                    kinds.join(", ")
                ))
            }
        }
    }
}

/// How many findings a report places one by one; the rest are counted.
const REPORTED_FINDINGS: usize = 50;

/// What was found in `prompt`, each with its line and column, never the value: "the prompt
/// holds 2 sensitive values and {outcome}: an e-mail address (line 1, column 9), ...". A
/// prompt of thousands of values gets the first [`REPORTED_FINDINGS`] and a count of the rest.
pub fn report(prompt: &str, findings: &[Finding], outcome: &str) -> String {
    let count = findings.len();
    let noun = if count == 1 { "value" } else { "values" };
    let mut out = format!("the prompt holds {count} sensitive {noun} and {outcome}:");
    let lines = Lines::new(prompt);
    for finding in findings.iter().take(REPORTED_FINDINGS) {
        let at = lines.locate(finding.span.start);
        let _ =
            write!(out, "\n  {} (line {}, column {}", finding.kind.describe(), at.line, at.column);
        if &*finding.rule != finding.kind.name() {
            let _ = write!(out, ", rule {}", finding.rule);
        }
        out.push(')');
    }
    if count > REPORTED_FINDINGS {
        let _ = write!(out, "\n  and {} more", count - REPORTED_FINDINGS);
    }
    out
}
