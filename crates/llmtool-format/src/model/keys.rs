//! The known keys of each object of the format, in the order the canonical form writes them.

pub const TOP_LEVEL: &[&str] = &["version", "model_prompt", "metadata", "tool_code"];
pub const METADATA: &[&str] = &[
    "tool_name",
    "tool_code",
    "prompt_name",
    "description",
    "usage_notes",
    "model_version",
    "creator",
    "parameters",
    "variables",
    "expected_output",
    "functions",
    "avatar_type",
    "avatar",
    "timestamp",
    "requirements",
];
pub const CREATOR: &[&str] = &["name", "email", "organization"];
pub const PARAMETERS: &[&str] =
    &["temperature", "max_tokens", "top_p", "frequency_penalty", "presence_penalty"];
pub const VARIABLE: &[&str] = &["name", "type", "description", "default", "allowed_values"];
pub const EXPECTED_OUTPUT: &[&str] = &["type", "format", "language", "allowed_values", "size"];
/// The inclusive range of each bounded parameter (`max_tokens` is a positive integer).
pub const PARAMETER_RANGES: [(&str, f64, f64); 4] = [
    ("temperature", 0.0, 2.0),
    ("top_p", 0.0, 1.0),
    ("frequency_penalty", -2.0, 2.0),
    ("presence_penalty", -2.0, 2.0),
];
/// The keys of an entry of `metadata.functions`.
pub const FUNCTION_ENTRY: &[&str] = &["builtin", "database", "tool", "mcp", "name"];
/// llmtool's own functions a tool may offer the model (`{"builtin": NAME}`).
pub const BUILTIN_FUNCTIONS: &[&str] = &["fetch_url", "web_search", "query_database"];
/// The keys of the nested avatar shape, `metadata.avatar = {avatar_type, avatar}`.
pub const NESTED_AVATAR: &[&str] = &["avatar_type", "avatar"];

/// The data-loss prevention policies a tool may ask for in `x-dlp` (llmtool-dlp's `Policy`).
pub const DLP_POLICIES: &[&str] = &["off", "warn", "redact", "block"];

/// Whether `root` is a smart tool in the smart tools' own layout: no `metadata` object, and
/// `tool_code` or `tool_name` at the top level beside the metadata's other keys.
pub fn is_flat_smart_tool(root: &crate::syntax::Node) -> bool {
    root.get("metadata").is_none()
        && (root.get("tool_code").is_some() || root.get("tool_name").is_some())
}

/// Whether `key` is an extension key (`x-...`), which is kept and never reported.
pub fn is_extension(key: &str) -> bool {
    key.starts_with("x-")
}
