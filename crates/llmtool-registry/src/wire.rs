//! The library's API bodies that both its server writes and its client reads, defined once so
//! that the two cannot drift: a version as the API shows it, a label's move, who is signed in,
//! and the problem document of a refusal. (The totals of the runs are `llmtool_log::Total`, read by `llmtool
//! usage` from either place.)

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use crate::model::ToolVersion;

/// A version as the API shows it: the tool file as JSON, not as text.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct VersionBody {
    pub slug: String,
    pub version: u32,
    pub content_hash: String,
    /// The tool file, in canonical form, as JSON.
    #[schema(value_type = Object)]
    pub tool: Box<RawValue>,
    pub note: Option<String>,
    pub published_at: String,
    pub published_by: Option<String>,
    pub tags: Vec<String>,
    pub labels: Vec<String>,
    /// The tool's variables as llmtool reads them: each type in its canonical name (whatever
    /// edition's name the file uses), with description, default and allowed values; a
    /// placeholder used but not declared is a text variable.
    #[schema(value_type = Vec<Object>)]
    pub variables: serde_json::Value,
    /// `prompt`, or `smart` for a smart tool.
    #[serde(default = "prompt_kind")]
    pub kind: String,
    /// A smart tool's Python code (`tool_code`, at the top level or in `metadata`).
    #[serde(default)]
    pub code: Option<String>,
}

/// What a version from a server that does not say its kind is.
fn prompt_kind() -> String {
    "prompt".to_owned()
}

impl From<ToolVersion> for VersionBody {
    fn from(version: ToolVersion) -> VersionBody {
        let document = llmtool_format::Document::from_text(version.text.clone());
        let tool = document.tool.as_ref();
        let variables = tool.map_or(serde_json::Value::Null, |tool| {
            let template = llmtool_format::template::ToolTemplate::new(tool);
            serde_json::to_value(template.variables()).unwrap_or_default()
        });
        let code = tool.and_then(llmtool_format::model::Tool::code).map(|code| code.value.clone());
        VersionBody {
            variables,
            kind: if code.is_some() { "smart" } else { "prompt" }.to_owned(),
            code,
            // The stored canonical text is sent as it is, not parsed and written again.
            tool: RawValue::from_string(version.text.trim_end().to_owned())
                .unwrap_or_else(|_| RawValue::NULL.to_owned()),
            slug: version.slug,
            version: version.version,
            content_hash: version.content_hash,
            note: version.note,
            published_at: version.published_at,
            published_by: version.published_by,
            tags: version.tags,
            labels: version.labels,
        }
    }
}

/// `PUT /tools/{slug}/labels/{label}`: the version the label moves to.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct LabelBody {
    pub version: u32,
}

/// An RFC 9457 problem document as the library answers a refused request with: what a client
/// reads of it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProblemBody {
    pub title: String,
    /// Optional in RFC 9457; the HTTP status says it too.
    #[serde(default)]
    pub status: u16,
    pub detail: String,
    /// A refused tool file's diagnostics (as `check --format json` gives them).
    #[serde(default)]
    pub diagnostics: Vec<serde_json::Value>,
}

/// Who is signed in, and the CSRF token to send in `X-CSRF-Token` with every write
/// (`GET /session`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Signed {
    pub name: String,
    pub role: String,
    /// `null` for a caller that came with a Bearer token, which needs none.
    pub csrf: Option<String>,
    /// Whether the workspace lets members publish public snapshots.
    #[serde(default)]
    pub public_snapshots: bool,
    /// The member signed in (their e-mail).
    #[serde(default)]
    pub member: String,
    /// The member's teams.
    #[serde(default)]
    pub teams: Vec<String>,
    /// Whether the server answers Slack now, so that a conversation can be connected to a
    /// channel.
    #[serde(default)]
    pub slack: bool,
}

/// A token just made: the token itself is shown this once.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MadeToken {
    pub token: String,
    #[serde(flatten)]
    pub info: crate::TokenInfo,
}

/// A device grant, as RFC 8628 answers it; the addresses are the server's own paths, to be
/// put after the address the terminal reached it by.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct GrantOpened {
    /// The terminal's secret: it trades it for the token (`POST /device/token`).
    pub device_code: String,
    /// What the member checks on the page: `XXXX-XXXX`.
    pub user_code: String,
    /// `/device`.
    pub verification_uri: String,
    /// `/device?code=XXXX-XXXX`.
    pub verification_uri_complete: String,
    /// Seconds until the grant expires.
    pub expires_in: u64,
    /// Seconds to wait between two asks.
    pub interval: u64,
}
