//! Typed readings of a GGUF file's metadata values (kept as a tagged union): strings, whole
//! numbers and floats, whatever width the writer chose.

use crate::gguf::{Content, Value};

pub(crate) fn string(content: &Content, key: &str) -> Option<String> {
    content.metadata.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A whole number that fits 32 bits, from any of GGUF's integer types.
pub(crate) fn number(content: &Content, key: &str) -> Option<u32> {
    content.metadata.get(key)?.as_i64().and_then(|n| u32::try_from(n).ok())
}

pub(crate) fn float(content: &Content, key: &str) -> Option<f32> {
    as_float(content.metadata.get(key)?)
}

pub(crate) fn boolean(content: &Content, key: &str) -> Option<bool> {
    match content.metadata.get(key)? {
        Value::Bool(value) => Some(*value),
        _ => None,
    }
}

pub(crate) fn as_float(value: &Value) -> Option<f32> {
    match value {
        Value::F32(v) => Some(*v),
        Value::F64(v) => Some(*v as f32),
        _ => None,
    }
}
