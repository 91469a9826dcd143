//! What to look for and what to do with it: the `[dlp]` table of the config file, and the
//! [`Policy`] a run follows.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::kind::Confidence;

/// What a run does with what the scanner finds in its prompt, in order of strictness (`Off`
/// the least, `Block` the most).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Nothing is scanned.
    #[default]
    Off,
    /// The prompt goes as it is; what was found is reported (kind and place, never the value).
    Warn,
    /// Every value found is swapped for a placeholder before the prompt goes, and put back in
    /// the answer.
    Redact,
    /// The run stops before anything is sent, with a report of what was found.
    Block,
}

impl Policy {
    pub const NAMES: [&'static str; 4] = ["off", "warn", "redact", "block"];

    pub fn name(self) -> &'static str {
        match self {
            Policy::Off => "off",
            Policy::Warn => "warn",
            Policy::Redact => "redact",
            Policy::Block => "block",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Policy {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "off" => Ok(Policy::Off),
            "warn" => Ok(Policy::Warn),
            "redact" => Ok(Policy::Redact),
            "block" => Ok(Policy::Block),
            other => Err(format!("`{other}` is not a policy: off, warn, redact or block")),
        }
    }
}

/// The `[dlp]` table of the config file. Every field may be left out.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The policy of runs whose tool and command line say none.
    pub policy: Option<Policy>,
    /// Kinds (`phone`) and secret rules (`generic-api-key`) not to look for.
    pub ignore: Vec<String>,
    /// The regions (ISO 3166 codes) a phone number written without its country code may
    /// belong to; see [`Config::DEFAULT_PHONE_REGIONS`].
    pub phone_regions: Option<Vec<String>>,
    /// The least confidence a finding needs to count (`low`, the default, counts all).
    pub min_confidence: Option<Confidence>,
    /// Values never reported, whatever they look like (a team's shared support address, say).
    pub allow: Vec<String>,
    /// Patterns of the user's own.
    pub custom: Vec<CustomRule>,
    /// Words and phrases of the user's own (code names, client names).
    pub words: Vec<WordList>,
}

impl Config {
    /// The regions of national phone numbers when the config names none: those Presidio's
    /// phone recogniser tries, and Korea, since llmtool's examples include Korean. Canada is
    /// not listed apart: it shares the United States' +1 plan, and a number read as American
    /// is valid when any region of that plan has it.
    pub const DEFAULT_PHONE_REGIONS: [&'static str; 8] =
        ["US", "GB", "DE", "FR", "IL", "IN", "BR", "KR"];
}

/// A regular expression whose matches are sensitive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomRule {
    /// Its name in reports.
    pub name: String,
    /// The pattern (Rust `regex` syntax, ASCII classes as in gitleaks: `\d` is 0-9). When it
    /// has a capture group, only the first group that matched is the value.
    pub regex: String,
    /// The word of its placeholders; the name in capitals when left out.
    pub label: Option<String>,
}

/// Words and phrases that are sensitive, matched whole and without regard to case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WordList {
    pub name: String,
    pub words: Vec<String>,
    pub label: Option<String>,
}

/// A config the scanner cannot be built from.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("the custom rule `{name}` has a pattern that does not compile: {problem}")]
    BadRegex { name: String, problem: String },
    #[error("`{0}` in `ignore` is neither a kind nor a secret rule")]
    UnknownIgnore(String),
    #[error("`{0}` in `phone_regions` is not a region code")]
    UnknownRegion(String),
    #[error("the label `{0}` must be capital letters, digits and underscores")]
    BadLabel(String),
}

/// The label of a custom rule or word list named `name`, checked.
pub(crate) fn custom_label(name: &str, label: Option<&str>) -> Result<String, ConfigError> {
    let label = label.map_or_else(
        || name.to_ascii_uppercase().replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        str::to_owned,
    );
    let good = label.starts_with(|c: char| c.is_ascii_uppercase())
        && label.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if good { Ok(label) } else { Err(ConfigError::BadLabel(label)) }
}
