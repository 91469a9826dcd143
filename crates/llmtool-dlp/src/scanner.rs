//! [`Scanner`]: every detector of a config, run over a text in as few passes as it can. One
//! `RegexSet` pass tells which patterns occur at all; only those run again to find and check
//! their candidates, phone numbers last (see [`Scanner::scan`]). Secret rules and word lists
//! each take one Aho-Corasick pass. Findings
//! that overlap are settled last: the surer, then the longer, then the more specific kind
//! wins.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use rlibphonenumber::{PHONE_NUMBER_UTIL, Region};

use crate::builtin::{BUILT_IN, BuiltIn, Context};
use crate::config::{Config, ConfigError, custom_label};
use crate::kind::{Confidence, Finding, Kind};
use crate::secrets::{self, SecretRules};

/// The most compiled memory one custom pattern may take.
const CUSTOM_REGEX_LIMIT: usize = 1 << 20;

/// Finds sensitive values. Built once from a [`Config`] and shared; scanning takes `&self`.
#[derive(Debug)]
pub struct Scanner {
    set: RegexSet,
    detectors: Vec<Detector>,
    context: Context,
    secrets: Option<&'static SecretRules>,
    ignored_rules: HashSet<String>,
    words: Option<Words>,
    allow: HashSet<String>,
    min_confidence: Confidence,
}

#[derive(Debug)]
enum Detector {
    BuiltIn(&'static BuiltIn, Regex),
    Custom { rule: Arc<str>, label: Arc<str>, regex: Regex },
}

/// The config's word lists, as one automaton.
#[derive(Debug)]
struct Words {
    automaton: AhoCorasick,
    /// The rule name and label of each word, by pattern index.
    owners: Vec<(Arc<str>, Arc<str>)>,
}

fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).unicode(false).size_limit(CUSTOM_REGEX_LIMIT).build()
}

impl Scanner {
    /// A scanner of every built-in kind and nothing else.
    pub fn with_defaults() -> Scanner {
        Scanner::new(&Config::default()).expect("the default config is valid")
    }

    pub fn new(config: &Config) -> Result<Scanner, ConfigError> {
        let secret_rules = secrets::rules();
        let mut ignored_kinds = HashSet::new();
        let mut ignored_rules = HashSet::new();
        for name in &config.ignore {
            match Kind::from_name(name) {
                Some(kind) => {
                    ignored_kinds.insert(kind);
                }
                None if secret_rules.ids().any(|id| id == name) => {
                    ignored_rules.insert(name.clone());
                }
                None => return Err(ConfigError::UnknownIgnore(name.clone())),
            }
        }
        let mut detectors = Vec::new();
        for built_in in BUILT_IN.iter().filter(|b| !ignored_kinds.contains(&b.kind)) {
            let regex = compile(built_in.pattern).expect("the built-in patterns compile");
            detectors.push(Detector::BuiltIn(built_in, regex));
        }
        for custom in &config.custom {
            let regex = compile(&custom.regex).map_err(|problem| ConfigError::BadRegex {
                name: custom.name.clone(),
                problem: problem.to_string(),
            })?;
            let label = custom_label(&custom.name, custom.label.as_deref())?;
            detectors.push(Detector::Custom {
                rule: Arc::from(custom.name.as_str()),
                label: Arc::from(label),
                regex,
            });
        }
        let patterns = detectors.iter().map(|d| match d {
            Detector::BuiltIn(_, regex) | Detector::Custom { regex, .. } => regex.as_str(),
        });
        let set = RegexSetBuilder::new(patterns)
            .unicode(false)
            .size_limit(CUSTOM_REGEX_LIMIT * 16)
            .build()
            .map_err(|problem| ConfigError::BadRegex {
                name: "the set of all patterns".into(),
                problem: problem.to_string(),
            })?;
        let regions = match &config.phone_regions {
            Some(names) => names.iter().map(|name| known_region(name)).collect::<Result<_, _>>()?,
            None => Config::DEFAULT_PHONE_REGIONS.iter().filter_map(|r| r.parse().ok()).collect(),
        };
        Ok(Scanner {
            set,
            detectors,
            context: Context { regions },
            secrets: (!ignored_kinds.contains(&Kind::Secret)).then_some(secret_rules),
            ignored_rules,
            words: Words::new(config)?,
            allow: config.allow.iter().cloned().collect(),
            min_confidence: config.min_confidence.unwrap_or(Confidence::Low),
        })
    }

    /// Every sensitive value in `text`, in order, none overlapping another.
    pub fn scan(&self, text: &str) -> Vec<Finding> {
        let mut found = Vec::new();
        let bytes = text.as_bytes();
        let mut phones = Vec::new();
        for index in &self.set.matches(bytes) {
            match &self.detectors[index] {
                Detector::BuiltIn(built_in, regex) if built_in.kind == Kind::Phone => {
                    phones.push((*built_in, regex));
                }
                Detector::BuiltIn(built_in, regex) => {
                    self.run(built_in, regex, text, &[], &mut found);
                }
                Detector::Custom { rule, label, regex } => {
                    for captures in regex.captures_iter(bytes) {
                        let Some(value) =
                            captures.iter().skip(1).flatten().next().or_else(|| captures.get(0))
                        else {
                            continue;
                        };
                        let span = widen(text, value.range());
                        if !span.is_empty() {
                            found.push(custom(rule, label, span));
                        }
                    }
                }
            }
        }
        if let Some(secrets) = self.secrets {
            secrets.scan(text, &self.ignored_rules, &mut found);
        }
        if let Some(words) = &self.words {
            words.scan(text, &mut found);
        }
        self.drop_allowed(text, &mut found);
        // Phone numbers last: their check (a numbering plan, region by region) is the
        // costliest, and a candidate inside a sure finding of another kind would lose to it.
        if !phones.is_empty() {
            let sure = merged(found.iter().filter(|f| f.confidence == Confidence::High));
            for (built_in, regex) in phones {
                self.run(built_in, regex, text, &sure, &mut found);
            }
            self.drop_allowed(text, &mut found);
        }
        // Settled before the cut, so that a weak finding dropped later cannot let a weaker
        // one of another kind through in its place.
        let mut settled = settle(found);
        settled.retain(|f| f.confidence >= self.min_confidence);
        settled
    }
}

impl Scanner {
    /// Adds the findings of one built-in pattern, skipping candidates that overlap `skip`
    /// (sorted, disjoint spans).
    fn run(
        &self,
        built_in: &BuiltIn,
        regex: &Regex,
        text: &str,
        skip: &[Range<usize>],
        found: &mut Vec<Finding>,
    ) {
        for captures in regex.captures_iter(text.as_bytes()) {
            let Some(matched) = captures.get(0) else { continue };
            let after = skip.partition_point(|s| s.end <= matched.start());
            if skip.get(after).is_some_and(|s| s.start < matched.end()) {
                continue;
            }
            if let Some((span, mut confidence)) = (built_in.check)(&self.context, text, &captures) {
                if built_in.has_context(text, span.start) {
                    confidence = confidence.raised();
                }
                found.push(Finding::built_in(built_in.kind, span, confidence));
            }
        }
    }

    fn drop_allowed(&self, text: &str, found: &mut Vec<Finding>) {
        if !self.allow.is_empty() {
            found.retain(|f| !self.allow.contains(&text[f.span.clone()]));
        }
    }
}

/// The spans of `findings`, sorted, with overlapping ones merged.
fn merged<'f>(findings: impl Iterator<Item = &'f Finding>) -> Vec<Range<usize>> {
    let mut spans: Vec<Range<usize>> = findings.map(|f| f.span.clone()).collect();
    spans.sort_by_key(|s| s.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for span in spans {
        match out.last_mut() {
            Some(last) if span.start < last.end => last.end = last.end.max(span.end),
            _ => out.push(span),
        }
    }
    out
}

fn custom(rule: &Arc<str>, label: &Arc<str>, span: Range<usize>) -> Finding {
    Finding {
        kind: Kind::Custom,
        rule: rule.clone(),
        label: label.clone(),
        span,
        confidence: Confidence::High,
    }
}

/// A region of the config, if the numbering plans have it (`Region` parses any two letters).
/// The default regions are not checked, so that a scanner that meets no phone number never
/// loads the plans.
fn known_region(name: &str) -> Result<Region, ConfigError> {
    name.to_ascii_uppercase()
        .parse::<Region>()
        .ok()
        .filter(|&region| PHONE_NUMBER_UTIL.get_country_code_for_region(region).is_some())
        .ok_or_else(|| ConfigError::UnknownRegion(name.to_owned()))
}

/// `span` widened to whole characters (a custom pattern may end inside one).
fn widen(text: &str, span: Range<usize>) -> Range<usize> {
    let (mut start, mut end) = (span.start, span.end);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

impl Words {
    fn new(config: &Config) -> Result<Option<Words>, ConfigError> {
        let mut words = Vec::new();
        let mut owners = Vec::new();
        for list in &config.words {
            let label: Arc<str> = Arc::from(custom_label(&list.name, list.label.as_deref())?);
            let rule: Arc<str> = Arc::from(list.name.as_str());
            for word in list.words.iter().filter(|w| !w.trim().is_empty()) {
                words.push(word.trim().to_owned());
                owners.push((rule.clone(), label.clone()));
            }
        }
        if words.is_empty() {
            return Ok(None);
        }
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(&words)
            .map_err(|problem| ConfigError::BadRegex {
                name: "words".into(),
                problem: problem.to_string(),
            })?;
        Ok(Some(Words { automaton, owners }))
    }

    fn scan(&self, text: &str, found: &mut Vec<Finding>) {
        let bytes = text.as_bytes();
        let word_char = |at: Option<&u8>| {
            at.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80)
        };
        for hit in self.automaton.find_iter(text) {
            let whole = !word_char(hit.start().checked_sub(1).and_then(|i| bytes.get(i)))
                && !word_char(bytes.get(hit.end()));
            if whole {
                let (rule, label) = &self.owners[hit.pattern().as_usize()];
                found.push(custom(rule, label, hit.range()));
            }
        }
    }
}

/// The findings that stand when overlapping ones are settled, in text order.
fn settle(mut found: Vec<Finding>) -> Vec<Finding> {
    if found.len() < 2 {
        return found;
    }
    // Strongest first: the surer, then the longer, then by the kinds' priority.
    let rank = |f: &Finding| f.kind.priority();
    found.sort_by(|a, b| {
        b.confidence
            .cmp(&a.confidence)
            .then(b.span.len().cmp(&a.span.len()))
            .then(rank(a).cmp(&rank(b)))
            .then(a.span.start.cmp(&b.span.start))
    });
    // Kept spans by start; they never overlap, so the one starting last before a finding's
    // end is the only one that can overlap it.
    let mut taken: BTreeMap<usize, usize> = BTreeMap::new();
    let mut kept: Vec<Finding> = Vec::with_capacity(found.len());
    for finding in found {
        let before_end = taken.range(..finding.span.end).next_back();
        if before_end.is_none_or(|(_, &end)| end <= finding.span.start) {
            taken.insert(finding.span.start, finding.span.end);
            kept.push(finding);
        }
    }
    kept.sort_by_key(|f| f.span.start);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_region_has_a_numbering_plan() {
        for name in Config::DEFAULT_PHONE_REGIONS {
            assert!(known_region(name).is_ok(), "{name}");
        }
        assert!(known_region("XX").is_err());
    }
}
