//! API keys and tokens, by the rules of `rules/secrets.toml` (derived from gitleaks; see its
//! header and `scripts/dlp_rules_from_gitleaks.py`). As in gitleaks, a rule runs only when one
//! of its keywords is in the text, found by one Aho-Corasick pass; its regex is compiled the
//! first time it runs, so a process that never meets a Slack token never compiles Slack's rule.
//!
//! Unlike gitleaks, which runs a rule over the whole file once a keyword is in it, a rule runs
//! only on the lines around each of its keywords: every rule's regex holds its keywords, so a
//! match is always near one, and a long text with a few keywords is not read once per rule.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::{Arc, LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;

use crate::checksums::entropy;
use crate::kind::{Confidence, Finding, Kind};
use crate::locate::Lines;

/// The rule file as written.
#[derive(Deserialize)]
struct RuleFile {
    allow: AllowFile,
    rule: Vec<RuleEntry>,
}

#[derive(Deserialize, Default)]
struct AllowFile {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    target: Option<String>,
}

#[derive(Deserialize)]
struct RuleEntry {
    id: String,
    regex: String,
    keywords: Vec<String>,
    entropy: Option<f64>,
    secret_group: Option<usize>,
    #[serde(default)]
    allow: Vec<AllowFile>,
}

/// What an allowlist's regexes look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

/// Values a rule (or every rule) lets pass.
#[derive(Debug)]
struct Allow {
    target: Target,
    regexes: Vec<Regex>,
    /// The stopwords, any of which inside a secret lets it pass: one automaton, since the
    /// catch-all rule has over a thousand and a text can hold a secret every few bytes.
    stopwords: Option<AhoCorasick>,
}

impl Allow {
    fn new(file: &AllowFile) -> Result<Allow, String> {
        let target = match file.target.as_deref() {
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            _ => Target::Secret,
        };
        let regexes = file
            .regexes
            .iter()
            .map(|r| compile(r))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let stopwords = if file.stopwords.is_empty() {
            None
        } else {
            let automaton = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(&file.stopwords)
                .map_err(|e| e.to_string())?;
            Some(automaton)
        };
        Ok(Allow { target, regexes, stopwords })
    }

    fn allows(&self, secret: &str, matched: &str, line: &str) -> bool {
        let subject = match self.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line,
        };
        self.regexes.iter().any(|r| r.is_match(subject.as_bytes()))
            || self.stopwords.as_ref().is_some_and(|words| words.is_match(secret))
    }
}

/// One rule, its regex and allowlists compiled on first use.
#[derive(Debug)]
struct Rule {
    id: Arc<str>,
    regex: String,
    entropy: Option<f64>,
    secret_group: Option<usize>,
    allow: Vec<AllowFile>,
    /// Whether a match can run on over many lines (a private key's block): then the rule
    /// reads from its keyword's line to the end of the text.
    spans_lines: bool,
    compiled: OnceLock<Option<(Regex, Vec<Allow>)>>,
}

/// How many lines after a keyword's line a rule reads (gitleaks' `curl` rules take an
/// option up to five lines after the command).
const LINES_AFTER_KEYWORD: usize = 5;

/// A character class that takes line breaks, repeated without bound (`[\s\S-]{64,}`).
static UNBOUNDED_OVER_LINES: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\[[^\]]*\\[snr][^\]]*\](?:\{\d+,\}|\*|\+)").expect("valid")
});

impl std::fmt::Debug for AllowFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllowFile").finish_non_exhaustive()
    }
}

impl Rule {
    /// The compiled regex and allowlists; `None` (and a logged reason, once) for a rule that
    /// does not compile, which `every_rule_compiles` keeps from happening.
    fn compiled(&self) -> Option<&(Regex, Vec<Allow>)> {
        self.compiled
            .get_or_init(|| {
                let regex = compile(&self.regex).ok()?;
                let allow = self.allow.iter().map(Allow::new).collect::<Result<_, _>>().ok()?;
                Some((regex, allow))
            })
            .as_ref()
    }
}

/// Compiles a gitleaks pattern with Go's meaning: `\d`, `\w`, `\s` and `\b` are ASCII.
fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).unicode(false).size_limit(1 << 22).build()
}

/// Every rule, with the keyword index over them.
#[derive(Debug)]
pub(crate) struct SecretRules {
    rules: Vec<Rule>,
    /// One pattern per distinct keyword; `rules_of[i]` are the rules of keyword `i`.
    keywords: AhoCorasick,
    rules_of: Vec<Vec<usize>>,
    /// Rules that have no keyword and so always run.
    always: Vec<usize>,
    global: Allow,
}

static RULES: LazyLock<SecretRules> = LazyLock::new(|| {
    SecretRules::parse(include_str!("../rules/secrets.toml")).expect("the bundled rules are valid")
});

/// The bundled rules, read once per process.
pub(crate) fn rules() -> &'static SecretRules {
    &RULES
}

impl SecretRules {
    fn parse(text: &str) -> Result<SecretRules, String> {
        let file: RuleFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let global = Allow::new(&file.allow)?;
        let mut words: Vec<String> = Vec::new();
        let mut rules_of: Vec<Vec<usize>> = Vec::new();
        let mut always = Vec::new();
        let mut rules = Vec::new();
        for (index, entry) in file.rule.into_iter().enumerate() {
            if entry.keywords.is_empty() {
                always.push(index);
            }
            for keyword in &entry.keywords {
                let keyword = keyword.to_ascii_lowercase();
                match words.iter().position(|w| *w == keyword) {
                    Some(at) => rules_of[at].push(index),
                    None => {
                        words.push(keyword);
                        rules_of.push(vec![index]);
                    }
                }
            }
            rules.push(Rule {
                spans_lines: UNBOUNDED_OVER_LINES.is_match(&entry.regex),
                id: Arc::from(entry.id),
                regex: entry.regex,
                entropy: entry.entropy,
                secret_group: entry.secret_group,
                allow: entry.allow,
                compiled: OnceLock::new(),
            });
        }
        let keywords = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&words)
            .map_err(|e| e.to_string())?;
        Ok(SecretRules { rules, keywords, rules_of, always, global })
    }

    /// The ids of every rule.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|rule| &*rule.id)
    }

    /// Adds to `found` the secrets in `text`, by every rule not in `ignored`.
    ///
    /// Linear in the text, however long its lines: the lines around each keyword come from a
    /// line index built once, the windows of one rule are merged before it runs (so it reads
    /// each byte at most once), and an allowlist sees at most [`LINE_REACH`] bytes of a
    /// secret's line on either side.
    pub(crate) fn scan(&self, text: &str, ignored: &HashSet<String>, found: &mut Vec<Finding>) {
        // The stretches of text each rule reads, in text order.
        let mut windows: Vec<Vec<Range<usize>>> = vec![Vec::new(); self.rules.len()];
        for index in &self.always {
            windows[*index].push(0..text.len());
        }
        let mut lines: Option<Lines<'_>> = None;
        for hit in self.keywords.find_overlapping_iter(text) {
            let lines = lines.get_or_insert_with(|| Lines::new(text));
            let line_start = lines.line_start(hit.start());
            let near_end = lines.end_of_line_after(hit.end(), LINES_AFTER_KEYWORD);
            for &index in &self.rules_of[hit.pattern().as_usize()] {
                let end = if self.rules[index].spans_lines { text.len() } else { near_end };
                push_merged(&mut windows[index], line_start..end);
            }
        }
        let Some(lines) = lines.or_else(|| (!self.always.is_empty()).then(|| Lines::new(text)))
        else {
            return;
        };
        for (rule, windows) in self.rules.iter().zip(windows) {
            if !windows.is_empty() && !ignored.contains(&*rule.id) {
                self.run(rule, &lines, &windows, found);
            }
        }
    }

    fn run(
        &self,
        rule: &Rule,
        lines: &Lines<'_>,
        windows: &[Range<usize>],
        found: &mut Vec<Finding>,
    ) {
        let Some((regex, allow)) = rule.compiled() else { return };
        let text = lines.text();
        for window in windows {
            // The text up to the window's end, searched from its start: what lies before the
            // window still counts for `\b` and the like.
            let haystack = &text.as_bytes()[..window.end];
            let mut at = window.start;
            while at <= window.end {
                let Some(captures) = regex.captures_at(haystack, at) else { break };
                let Some(matched) = captures.get(0) else { break };
                at = if matched.is_empty() { matched.end() + 1 } else { matched.end() };
                self.take(rule, allow, lines, &captures, found);
            }
        }
    }

    /// Adds the secret of one match of `rule`, unless an allowlist lets it pass.
    fn take(
        &self,
        rule: &Rule,
        allow: &[Allow],
        lines: &Lines<'_>,
        captures: &regex::bytes::Captures<'_>,
        found: &mut Vec<Finding>,
    ) {
        let Some(matched) = captures.get(0) else { return };
        let text = lines.text();
        // As gitleaks: the rule's secret group, else the first group that matched, else
        // the whole match.
        let secret = match rule.secret_group {
            Some(group) => captures.get(group),
            None => captures.iter().skip(1).flatten().find(|m| !m.is_empty()),
        }
        .unwrap_or(matched);
        let span = char_span(text, secret.range());
        let (secret_text, matched_text) =
            (&text[span.clone()], &text[char_span(text, matched.range())]);
        if secret_text.is_empty() || rule.entropy.is_some_and(|least| entropy(secret_text) <= least)
        {
            return;
        }
        let line = line_around(lines, &span);
        if self.global.allows(secret_text, matched_text, line)
            || allow.iter().any(|a| a.allows(secret_text, matched_text, line))
        {
            return;
        }
        // The catch-all rule for `key = value` finds many things that are not secrets.
        let confidence =
            if &*rule.id == "generic-api-key" { Confidence::Low } else { Confidence::High };
        found.push(Finding {
            kind: Kind::Secret,
            rule: rule.id.clone(),
            label: Arc::from(Kind::Secret.label()),
            span,
            confidence,
        });
    }
}

/// Adds `span` to `spans` (sorted, disjoint), joining it to the last one if they overlap or
/// touch. Keyword hits come in text order, so their windows start in order too.
fn push_merged(spans: &mut Vec<Range<usize>>, span: Range<usize>) {
    match spans.last_mut() {
        Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
        _ => spans.push(span),
    }
}

/// `span` widened to whole characters (a rule's `.` may end a match inside one).
fn char_span(text: &str, span: Range<usize>) -> Range<usize> {
    let mut start = span.start.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = span.end.min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

/// How much of a secret's line, on either side of it, a `line` allowlist sees: enough for the
/// statement around a value (an import, a licence field), and no more, so that every finding
/// on a line of megabytes does not read the whole line again.
const LINE_REACH: usize = 256;

/// The line that `span` starts on, cut to [`LINE_REACH`] bytes before and after the span.
fn line_around<'t>(lines: &Lines<'t>, span: &Range<usize>) -> &'t str {
    let text = lines.text();
    let start = lines.line_start(span.start).max(span.start.saturating_sub(LINE_REACH));
    let line_end = lines.end_of_line_after(span.start, 0);
    let line_end = if text[..line_end].ends_with('\n') { line_end - 1 } else { line_end };
    let end = line_end.min(span.end.saturating_add(LINE_REACH)).max(start);
    &text[char_span(text, start..end)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles() {
        let rules = rules();
        assert!(rules.rules.len() > 200, "{} rules", rules.rules.len());
        for rule in &rules.rules {
            assert!(rule.compiled().is_some(), "{} does not compile", rule.id);
        }
    }

    #[test]
    fn a_rule_runs_only_when_its_keyword_is_there() {
        let mut found = Vec::new();
        let token = "ghp_4Zs8fPq2LmN7xVb3KcT9wYr1HdJ6eGa5UoQi";
        rules().scan(&format!("token: {token}"), &HashSet::new(), &mut found);
        // The catch-all `key: value` rule matches too; the scanner settles the overlap.
        assert!(found.iter().any(|f| &*f.rule == "github-pat"), "{found:?}");
        let mut none = Vec::new();
        rules().scan("no tokens in this sentence at all", &HashSet::new(), &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn only_block_rules_read_to_the_end_of_the_text() {
        let spanning: Vec<&str> =
            rules().rules.iter().filter(|r| r.spans_lines).map(|r| &*r.id).collect();
        assert_eq!(spanning, ["jwt-base64", "private-key"]);
    }

    #[test]
    fn reading_near_keywords_finds_what_reading_everything_finds() {
        let secrets = [
            "export GITHUB_TOKEN=ghp_4Zs8fPq2LmN7xVb3KcT9wYr1HdJ6eGa5UoQi",
            "aws_access_key_id = AKIAZ4XQ7R2M5T2N3W6P",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n\
             AAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5\n-----END OPENSSH PRIVATE KEY-----",
            "curl https://api.example.com/v1/items \\\n  -X POST \\\n  \
             -H \"Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0\"",
            "slack = xoxb-2468013579-1357924680-Zq8Lm3Nw7Rt2Yx5Kc9Vb4Hd1",
            "my password is hunter2 and the api key: Xk29fLq83mZp0aTr71WcQe5",
        ];
        let filler = "The meeting moved to Thursday; bring the key figures.\n".repeat(40);
        let text = secrets.iter().fold(String::new(), |text, s| text + &filler + s + "\n");
        let mut near = Vec::new();
        rules().scan(&text, &HashSet::new(), &mut near);
        let mut everywhere = Vec::new();
        let whole_text = 0..text.len();
        let lines = Lines::new(&text);
        for rule in &rules().rules {
            rules().run(rule, &lines, std::slice::from_ref(&whole_text), &mut everywhere);
        }
        let spans = |found: &[Finding]| {
            let mut spans: Vec<(String, Range<usize>)> =
                found.iter().map(|f| (f.rule.to_string(), f.span.clone())).collect();
            spans.sort_by_key(|(rule, span)| (span.start, rule.clone()));
            spans
        };
        assert!(near.len() >= secrets.len(), "{near:?}");
        assert_eq!(spans(&near), spans(&everywhere));
    }

    #[test]
    fn an_ignored_rule_finds_nothing() {
        let mut found = Vec::new();
        let ignored = HashSet::from(["github-pat".to_owned()]);
        rules().scan("ghp_4Zs8fPq2LmN7xVb3KcT9wYr1HdJ6eGa5UoQi", &ignored, &mut found);
        assert!(found.iter().all(|f| &*f.rule != "github-pat"));
    }
}
