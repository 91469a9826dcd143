//! A configured place to send requests: which API it speaks, where, with which key, and what
//! that server supports.

use serde::Serialize;

/// The wire protocols llmtool speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApiKind {
    /// OpenAI Chat Completions, which most servers also speak.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `generateContent` (AI Studio).
    Gemini,
    /// Gemini on Google Cloud Vertex AI.
    Vertex,
    /// The embedded local model (no HTTP; the base URL is unused).
    Local,
}

/// What a server of the OpenAI protocol supports beyond the basics.
#[allow(clippy::struct_excessive_bools, reason = "independent capability flags of a server")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Features {
    /// The body field for the answer length: `max_completion_tokens` (OpenAI) or `max_tokens`.
    pub max_tokens_field: &'static str,
    /// Whether `frequency_penalty` and `presence_penalty` are accepted.
    pub penalties: bool,
    /// Whether `response_format: json_schema` (structured output) is supported.
    pub json_schema: bool,
    /// Whether `response_format: json_object` (JSON mode) is supported.
    pub json_mode: bool,
    /// Whether a schema inside JSON mode (`{"type": "json_object", "schema": ...}`, as llama.cpp
    /// servers take it) constrains the answer, for servers without `json_schema`.
    pub json_object_schema: bool,
    /// Whether `stream_options.include_usage` is supported.
    pub stream_usage: bool,
}

impl From<llmtool_config::ApiName> for ApiKind {
    fn from(name: llmtool_config::ApiName) -> Self {
        match name {
            llmtool_config::ApiName::Openai => Self::OpenAi,
            llmtool_config::ApiName::Anthropic => Self::Anthropic,
            llmtool_config::ApiName::Gemini => Self::Gemini,
            llmtool_config::ApiName::Vertex => Self::Vertex,
        }
    }
}

impl Features {
    /// What OpenAI itself supports.
    pub const OPENAI: Features = Features {
        json_object_schema: false,
        max_tokens_field: "max_completion_tokens",
        penalties: true,
        json_schema: true,
        json_mode: true,
        stream_usage: true,
    };
    /// What most compatible servers support.
    pub const COMPATIBLE: Features = Features {
        json_object_schema: false,
        max_tokens_field: "max_tokens",
        penalties: true,
        json_schema: false,
        json_mode: true,
        stream_usage: true,
    };
}

/// Where and how to send requests.
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct Endpoint {
    /// The provider's short name, as in `--provider` (`openai`, `groq`, `anthropic`, ...).
    pub provider: String,
    /// The provider's name in messages (`OpenAI`, `Groq`, ...).
    pub display: String,
    pub api: ApiKind,
    #[serde(serialize_with = "serialize_url")]
    pub base_url: String,
    /// The API key, if one is set; never printed.
    #[serde(skip)]
    pub api_key: Option<String>,
    /// The environment variable the key is read from.
    pub key_variable: Option<String>,
    pub features: Features,
    /// For Vertex AI: `projects/P/locations/L`.
    pub vertex_path: Option<String>,
}

/// Debug output shows whether a key is set, never the key, nor a password in the URL.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("api", &self.api)
            .field("base_url", &crate::http::redact_url(&self.base_url))
            .field("api_key", &self.api_key.as_ref().map(|_| crate::redact::REDACTED))
            .field("key_variable", &self.key_variable)
            .finish_non_exhaustive()
    }
}

fn serialize_url<S: serde::Serializer>(url: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::http::redact_url(url))
}

impl Endpoint {
    /// `base_url` + `path`, with exactly one slash between.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url.trim_end_matches('/'), path.trim_start_matches('/'))
    }
}
