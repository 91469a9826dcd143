//! Reversible redaction for one request: values become typed placeholders (`[EMAIL_1]`), the
//! same value the same placeholder, and placeholders in the model's answer become the values
//! again, whole ([`Redaction::restore`]) or as the answer streams in ([`Restorer`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use crate::kind::{Finding, Kind};

/// The placeholders of one request and the values they stand for. It holds the values, so it
/// lives as long as the request and is never logged or shown.
#[derive(Default, Clone)]
pub struct Redaction {
    placeholder_of: HashMap<String, String>,
    value_of: HashMap<String, String>,
    next: HashMap<String, usize>,
    counts: BTreeMap<String, usize>,
    longest: usize,
}

impl std::fmt::Debug for Redaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the values.
        f.debug_struct("Redaction").field("counts", &self.counts).finish_non_exhaustive()
    }
}

impl Redaction {
    pub fn new() -> Redaction {
        Redaction::default()
    }

    /// `text` with each of `findings` (as [`crate::Scanner::scan`] returns them: in order,
    /// none overlapping) swapped for its placeholder.
    pub fn redact(&mut self, text: &str, findings: &[Finding]) -> String {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for finding in findings {
            let span = finding.span.clone();
            if span.start < at || span.end > text.len() {
                continue;
            }
            out.push_str(&text[at..span.start]);
            let placeholder = self.placeholder(text, &text[span.clone()], finding);
            out.push_str(&placeholder);
            at = span.end;
        }
        out.push_str(&text[at..]);
        out
    }

    /// The placeholder of `value`: the one it already has, or the next free one of its label
    /// (skipping any that `text` itself contains, so that restoring never touches the user's
    /// own words).
    fn placeholder(&mut self, text: &str, value: &str, finding: &Finding) -> String {
        let key = count_key(finding);
        *self.counts.entry(key).or_default() += 1;
        if let Some(placeholder) = self.placeholder_of.get(value) {
            return placeholder.clone();
        }
        let label = &*finding.label;
        let next = self.next.entry(label.to_owned()).or_insert(0);
        let placeholder = loop {
            *next += 1;
            let candidate = format!("[{label}_{next}]");
            if !text.contains(&candidate) {
                break candidate;
            }
        };
        self.longest = self.longest.max(placeholder.len());
        self.placeholder_of.insert(value.to_owned(), placeholder.clone());
        self.value_of.insert(placeholder.clone(), value.to_owned());
        placeholder
    }

    /// A redaction that goes on from `placeholders` (each placeholder and the value it stands
    /// for, as [`Redaction::placeholders`] gave them): the next turn of a conversation, where
    /// a value keeps the placeholder it had and a new one takes the next free number. Its
    /// counts start at zero (they count what this turn swaps).
    pub fn resume<'p>(placeholders: impl IntoIterator<Item = (&'p str, &'p str)>) -> Redaction {
        let mut redaction = Redaction::new();
        for (placeholder, value) in placeholders {
            let Some((label, number)) = placeholder
                .strip_prefix('[')
                .and_then(|p| p.strip_suffix(']'))
                .and_then(|p| p.rsplit_once('_'))
                .and_then(|(label, n)| Some((label, n.parse::<usize>().ok()?)))
            else {
                continue;
            };
            let next = redaction.next.entry(label.to_owned()).or_insert(0);
            *next = (*next).max(number);
            redaction.longest = redaction.longest.max(placeholder.len());
            redaction.placeholder_of.insert(value.to_owned(), placeholder.to_owned());
            redaction.value_of.insert(placeholder.to_owned(), value.to_owned());
        }
        redaction
    }

    /// Each placeholder and the value it stands for, in placeholder order: what a
    /// conversation keeps (privately, as it keeps the values themselves) so that its next
    /// turn can [`Redaction::resume`].
    pub fn placeholders(&self) -> BTreeMap<&str, &str> {
        self.value_of.iter().map(|(p, v)| (p.as_str(), v.as_str())).collect()
    }

    /// How many values were swapped, by kind (`email`) or, for the config's own rules, by
    /// rule name: what logs may record.
    pub fn counts(&self) -> &BTreeMap<String, usize> {
        &self.counts
    }

    /// Whether nothing was swapped.
    pub fn is_empty(&self) -> bool {
        self.value_of.is_empty()
    }

    /// `text` with every placeholder of this redaction put back.
    pub fn restore<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.is_empty() || !text.contains('[') {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find('[') {
            out.push_str(&rest[..open]);
            let candidate = &rest[open..];
            let close = candidate.as_bytes().iter().take(self.longest).position(|&b| b == b']');
            match close
                .and_then(|close| self.value_of.get(&candidate[..=close]).map(|v| (close, v)))
            {
                Some((close, value)) => {
                    out.push_str(value);
                    rest = &candidate[close + 1..];
                }
                None => {
                    out.push('[');
                    rest = &candidate[1..];
                }
            }
        }
        out.push_str(rest);
        Cow::Owned(out)
    }

    /// `text` with every value this redaction hid swapped for its placeholder again: what a
    /// log keeps of a restored answer, or of the values a run was given.
    pub fn mask(&self, text: &str) -> String {
        let mut values: Vec<(&String, &String)> = self.placeholder_of.iter().collect();
        // Longest first, so that a value inside another does not split it.
        values.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(b.0)));
        let mut out = text.to_owned();
        for (value, placeholder) in values {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), placeholder);
            }
        }
        out
    }

    /// A restorer for an answer arriving in chunks.
    pub fn restorer(&self) -> Restorer<'_> {
        Restorer { redaction: self, pending: String::new() }
    }

    /// Whether `tail` (text after a `[` with no `]` yet) may still become a placeholder.
    fn may_become_placeholder(&self, tail: &str) -> bool {
        tail.len() < self.longest && self.value_of.keys().any(|p| p.starts_with(tail))
    }
}

fn count_key(finding: &Finding) -> String {
    match finding.kind {
        Kind::Custom => finding.rule.to_string(),
        kind => kind.name().to_owned(),
    }
}

/// Restores placeholders in a stream: text goes out as soon as no placeholder can be cut in
/// two by what comes next, so a `[EM` at a chunk's end waits for the next chunk.
#[derive(Debug)]
pub struct Restorer<'r> {
    redaction: &'r Redaction,
    pending: String,
}

impl Restorer<'_> {
    /// The text of `chunk` that can be shown now, restored.
    pub fn push(&mut self, chunk: &str) -> String {
        self.pending.push_str(chunk);
        let hold = match self.pending.rfind('[') {
            Some(open)
                if !self.pending[open..].contains(']')
                    && self.redaction.may_become_placeholder(&self.pending[open..]) =>
            {
                open
            }
            _ => self.pending.len(),
        };
        let ready = self.redaction.restore(&self.pending[..hold]).into_owned();
        self.pending.drain(..hold);
        ready
    }

    /// What is held back, restored, at the end of the stream.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        self.redaction.restore(&rest).into_owned()
    }
}
