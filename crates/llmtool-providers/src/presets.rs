//! The providers llmtool knows by name: which API each speaks, where, and with which key.

use crate::endpoint::{ApiKind, Features};

/// A provider known by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub display: &'static str,
    pub api: ApiKind,
    pub base_url: &'static str,
    /// Environment variables the key is read from, first found wins; empty for local servers.
    pub key_variables: &'static [&'static str],
    /// The environment variable that overrides the base URL, as the provider's SDK honours it.
    pub base_url_variable: Option<&'static str>,
    pub features: Features,
    /// Bare model names starting with one of these are served by this provider.
    pub model_prefixes: &'static [&'static str],
    /// What runs when this provider is chosen but no model it can serve is named.
    pub default_model: Option<&'static str>,
}

impl Preset {
    /// Local servers need no key and are only used when named or configured.
    pub fn is_local(&self) -> bool {
        self.key_variables.is_empty()
    }
}

const fn openai_compatible(
    name: &'static str,
    display: &'static str,
    base_url: &'static str,
    key_variables: &'static [&'static str],
    features: Features,
    model_prefixes: &'static [&'static str],
) -> Preset {
    Preset {
        name,
        display,
        api: ApiKind::OpenAi,
        base_url,
        key_variables,
        base_url_variable: None,
        features,
        model_prefixes,
        default_model: None,
    }
}

impl Preset {
    const fn with_default_model(mut self, model: &'static str) -> Self {
        self.default_model = Some(model);
        self
    }
}

/// Servers that take neither `stream_options` nor structured output.
const STRICT_FIELDS: Features =
    Features { stream_usage: false, json_schema: false, ..Features::COMPATIBLE };
const WITH_SCHEMA: Features = Features { json_schema: true, ..Features::COMPATIBLE };
/// llama.cpp servers (and llama-cpp-python's) take a schema inside JSON mode, not `json_schema`.
const LLAMA_CPP: Features = Features { json_object_schema: true, ..Features::COMPATIBLE };

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "openai",
        display: "OpenAI",
        api: ApiKind::OpenAi,
        base_url: "https://api.openai.com/v1",
        key_variables: &["OPENAI_API_KEY"],
        base_url_variable: Some("OPENAI_BASE_URL"),
        features: Features::OPENAI,
        model_prefixes: &["gpt-", "o1", "o3", "o4", "chatgpt-"],
        default_model: Some("gpt-4o-mini"),
    },
    Preset {
        name: "anthropic",
        display: "Anthropic",
        api: ApiKind::Anthropic,
        base_url: "https://api.anthropic.com",
        key_variables: &["ANTHROPIC_API_KEY"],
        base_url_variable: Some("ANTHROPIC_BASE_URL"),
        features: Features::COMPATIBLE,
        model_prefixes: &["claude-"],
        default_model: Some("claude-haiku-4-5"),
    },
    Preset {
        name: "gemini",
        display: "Gemini",
        api: ApiKind::Gemini,
        base_url: "https://generativelanguage.googleapis.com",
        key_variables: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        base_url_variable: Some("GEMINI_BASE_URL"),
        features: Features::COMPATIBLE,
        model_prefixes: &["gemini-", "gemma-"],
        default_model: Some("gemini-2.5-flash"),
    },
    Preset {
        name: "vertex",
        display: "Vertex AI",
        api: ApiKind::Vertex,
        base_url: "https://{location}-aiplatform.googleapis.com",
        key_variables: &["GOOGLE_CLOUD_ACCESS_TOKEN"],
        base_url_variable: Some("VERTEX_BASE_URL"),
        features: Features::COMPATIBLE,
        model_prefixes: &[],
        default_model: Some("gemini-2.5-flash"),
    },
    Preset {
        name: "local",
        display: "local model",
        api: ApiKind::Local,
        base_url: "in-process",
        key_variables: &[],
        base_url_variable: None,
        features: Features::COMPATIBLE,
        model_prefixes: &[],
        default_model: Some(crate::resolve::DEFAULT_LOCAL_MODEL),
    },
    openai_compatible(
        "groq",
        "Groq",
        "https://api.groq.com/openai/v1",
        &["GROQ_API_KEY"],
        WITH_SCHEMA,
        &[],
    )
    .with_default_model("llama-3.3-70b-versatile"),
    openai_compatible(
        "mistral",
        "Mistral",
        "https://api.mistral.ai/v1",
        &["MISTRAL_API_KEY"],
        STRICT_FIELDS,
        &["mistral-", "codestral", "ministral", "magistral", "pixtral", "open-mistral"],
    )
    .with_default_model("mistral-small-latest"),
    openai_compatible(
        "together",
        "Together AI",
        "https://api.together.xyz/v1",
        &["TOGETHER_API_KEY"],
        WITH_SCHEMA,
        &[],
    ),
    openai_compatible(
        "perplexity",
        "Perplexity",
        "https://api.perplexity.ai",
        &["PERPLEXITY_API_KEY", "PPLX_API_KEY"],
        STRICT_FIELDS,
        &["sonar"],
    )
    .with_default_model("sonar"),
    openai_compatible(
        "huggingface",
        "Hugging Face",
        "https://router.huggingface.co/v1",
        &["HF_TOKEN", "HUGGINGFACE_API_KEY"],
        Features::COMPATIBLE,
        &[],
    ),
    openai_compatible(
        "deepseek",
        "DeepSeek",
        "https://api.deepseek.com/v1",
        &["DEEPSEEK_API_KEY"],
        Features::COMPATIBLE,
        &["deepseek-"],
    )
    .with_default_model("deepseek-chat"),
    openai_compatible(
        "openrouter",
        "OpenRouter",
        "https://openrouter.ai/api/v1",
        &["OPENROUTER_API_KEY"],
        WITH_SCHEMA,
        &[],
    ),
    openai_compatible("ollama", "Ollama", "http://127.0.0.1:11434/v1", &[], WITH_SCHEMA, &[]),
    openai_compatible(
        "llamacpp",
        "llama.cpp server",
        "http://127.0.0.1:8080/v1",
        &[],
        LLAMA_CPP,
        &[],
    ),
    openai_compatible("vllm", "vLLM", "http://127.0.0.1:8000/v1", &[], WITH_SCHEMA, &[]),
    openai_compatible("lmstudio", "LM Studio", "http://127.0.0.1:1234/v1", &[], WITH_SCHEMA, &[]),
];

/// The preset called `name`.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// The family names older tool files use, and what they stand for today. The config file's
/// `[aliases]` table overrides and extends them.
pub const DEFAULT_ALIASES: &[(&str, &str)] = &[
    ("gpt-4", "openai/gpt-4o"),
    ("gpt-4-turbo", "openai/gpt-4o"),
    ("gpt-3.5", "openai/gpt-4o-mini"),
    ("gpt-3.5-turbo", "openai/gpt-4o-mini"),
    ("claude", "anthropic/claude-sonnet-4-5"),
    ("claude-2", "anthropic/claude-sonnet-4-5"),
    ("claude-instant", "anthropic/claude-haiku-4-5"),
    ("chat-bison", "gemini/gemini-2.5-flash"),
    ("text-bison", "gemini/gemini-2.5-flash"),
    ("gemini-pro", "gemini/gemini-2.5-pro"),
];
