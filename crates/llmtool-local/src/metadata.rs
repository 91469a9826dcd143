//! Typed readings of a GGUF file's metadata values (candle keeps them as a tagged union):
//! strings, whole numbers and floats, whatever width the writer chose.

use candle_core::quantized::gguf_file::{Content, Value};

pub(crate) fn string(content: &Content, key: &str) -> Option<String> {
    content.metadata.get(key).and_then(|v| v.to_string().ok()).cloned()
}

/// A whole number that fits 32 bits, from any of GGUF's integer types.
pub(crate) fn number(content: &Content, key: &str) -> Option<u32> {
    match content.metadata.get(key)? {
        Value::U8(v) => Some(u32::from(*v)),
        Value::U16(v) => Some(u32::from(*v)),
        Value::U32(v) => Some(*v),
        Value::I32(v) => u32::try_from(*v).ok(),
        Value::U64(v) => u32::try_from(*v).ok(),
        Value::I64(v) => u32::try_from(*v).ok(),
        _ => None,
    }
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
