//! What the library holds and answers: versions, search results and pages, tokens and roles.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Which version of a tool: the latest, a number, or the one a label points at.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Selector {
    Latest,
    Version(u32),
    Label(String),
}

/// The outcome of a publish: the version the content has. Publishing the content of the
/// latest version again makes no new version (`created` is false).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Published {
    pub slug: String,
    pub version: u32,
    pub content_hash: String,
    pub created: bool,
    /// The tool's tags once published, which say who sees it: `all`, every member; a team's
    /// name, that team's members (owners and admins see every tool).
    #[serde(default)]
    pub tags: Vec<String>,
}

/// One version of a tool, whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolVersion {
    pub slug: String,
    pub version: u32,
    /// SHA-256 of `text`, in hex.
    pub content_hash: String,
    /// The tool file, in its canonical form.
    pub text: String,
    pub note: Option<String>,
    /// RFC 3339, in UTC.
    pub published_at: String,
    /// The name of the token that published it.
    pub published_by: Option<String>,
    /// The tool's tags (they belong to the tool, not to a version).
    pub tags: Vec<String>,
    /// The labels that point at this version.
    pub labels: Vec<String>,
}

/// A tool in search results: its latest version's description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Summary {
    pub slug: String,
    pub version: u32,
    pub name: Option<String>,
    pub description: Option<String>,
    pub tags: Vec<String>,
    /// The expected output's type (`text`, `limited`, `code`...), when the tool says.
    pub output_type: Option<String>,
    pub models: Vec<String>,
    /// The creator's name, when the tool says.
    pub creator: Option<String>,
    /// Whether the tool's file holds its avatar as image data (`GET /tools/{slug}/avatar`
    /// serves it): `avatar_type` base64, or a `data:` URL in base64. An avatar given as a URL
    /// is not counted, since it is never fetched, nor a percent-encoded `data:` URL, which
    /// the avatar route does not decode.
    pub has_avatar: bool,
    /// `prompt`, or `smart` for a smart tool (Python `tool_code` run in the sandbox).
    pub kind: String,
}

/// A search: words (full text over name, description, usage notes and prompt) and filters,
/// a page at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Query {
    pub text: Option<String>,
    pub tag: Option<String>,
    /// `text`, `single-select` or `multi-select`: tools with a variable of that type.
    pub variable_type: Option<String>,
    pub output_type: Option<String>,
    /// Tools whose `model_version` names this model.
    pub model: Option<String>,
    /// Where the previous page ended ([`Page::next`]).
    pub cursor: Option<String>,
    pub limit: u32,
    /// The tools the caller may see (the rest are not found).
    pub visible: crate::Visibility,
}

/// One page of search results, and the cursor of the next one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Page {
    pub tools: Vec<Summary>,
    pub next: Option<String>,
}

/// What a member (and each of their tokens) may do: read; also publish, tag and label; also
/// manage tokens, members and teams, and delete; an owner also makes and unmakes owners, and
/// the library always keeps one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Editor,
    Admin,
    Owner,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Editor, Role::Admin, Role::Owner];

    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Admin => "admin",
            Role::Owner => "owner",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.as_str() == text)
    }
}

/// Who a token or a session stands for: the token's name (a session opened without a token:
/// the member's e-mail), its role (never above its member's), its member and their teams, and
/// the workspace's settings as they were when it was looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub name: String,
    pub role: Role,
    /// The member's e-mail.
    pub member: String,
    /// The member's id: made when they were added, never given again (what owns their
    /// conversations).
    pub member_id: String,
    pub teams: Vec<String>,
    pub workspace: crate::Workspace,
}

impl Holder {
    /// What the holder sees of the library.
    pub fn visibility(&self) -> crate::Visibility {
        crate::Visibility::of(self.role, &self.teams, &self.workspace)
    }
}

/// A signed-in session of the web studio: who it stands for, and the CSRF token its pages
/// send back with every write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub holder: Holder,
    pub csrf: String,
}

/// A tag, and how many tools (not deleted) carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct TagCount {
    pub tag: String,
    pub tools: u64,
}

/// One page of a tool's runs, newest first, and where the next page starts: the last run the
/// page read when it read a full page, so that a record that could not be read (it is left
/// out) does not end the history early.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunsPage {
    pub runs: Vec<KeptRun>,
    pub next: Option<i64>,
}

/// A run made through the server, as kept: the version it ran, the token that ran it, and the
/// run as the run log records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeptRun {
    pub slug: String,
    pub version: u32,
    pub run_by: Option<String>,
    #[serde(flatten)]
    pub record: llmtool_log::Record,
}
