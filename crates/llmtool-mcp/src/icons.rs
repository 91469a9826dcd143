//! A tool's avatar as an MCP icon: a `data:` URL for base64 data, the URL itself otherwise.

use llmtool_format::image;
use llmtool_format::model::Tool;
use serde_json::{Value, json};

/// The icons of `tool` (none, or one made from its avatar).
pub(crate) fn of(tool: &Tool) -> Vec<Value> {
    let Some(avatar) = tool.metadata.as_ref().and_then(|m| m.avatar.as_ref()) else {
        return Vec::new();
    };
    let Some(data) = avatar.data.as_ref().map(|d| d.value.trim()) else { return Vec::new() };
    let kind = avatar.kind.as_ref().map_or("", |k| k.value.as_str());
    if let Some(url) = data.strip_prefix("data:") {
        let mime = url.split([';', ',']).next().unwrap_or_default();
        return vec![icon(data, Some(mime))];
    }
    if kind.eq_ignore_ascii_case("base64") {
        let Ok(info) = image::decode_base64(data).and_then(|bytes| image::sniff(&bytes)) else {
            return Vec::new();
        };
        let mime = info.format.media_type();
        let payload: String = data.chars().filter(|c| !c.is_whitespace()).collect();
        return vec![icon(&format!("data:{mime};base64,{payload}"), Some(mime))];
    }
    vec![icon(data, None)]
}

fn icon(src: &str, mime: Option<&str>) -> Value {
    let mut icon = json!({ "src": src });
    if let Some(mime) = mime.filter(|m| !m.is_empty()) {
        icon["mimeType"] = json!(mime);
    }
    icon
}
