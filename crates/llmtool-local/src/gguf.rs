//! The GGUF container read by hand: its metadata and its tensors' names, types, shapes and
//! offsets (the weights themselves stay in the mapped file, read by `llama::matrix`).
//!
//! Written here rather than taken from a crate: the one well-kept reader is candle's, which
//! comes with a whole tensor library (and its matrix-multiplication crates) that the engine
//! does not use; the stand-alone crates are unmaintained or read without bounds. This one
//! trusts nothing in the file: every length and count is checked against the bytes left
//! before anything is allocated (a count of items against the smallest size such items take),
//! arrays nest at most [`MAX_DEPTH`] deep, and a damaged file is an error, never a panic.
//! Strings are read as candle and llama.cpp read them: not required to be UTF-8 (invalid bytes
//! become U+FFFD) and without the trailing NULs some writers add.

use std::collections::HashMap;

/// How deep arrays may nest in the metadata (the files in use nest one level).
const MAX_DEPTH: usize = 4;
/// GGML's largest number of dimensions.
const MAX_DIMS: usize = 4;
/// Where tensor data starts is rounded up to this, unless `general.alignment` says otherwise.
const DEFAULT_ALIGNMENT: u64 = 32;

/// A metadata value, in the type the writer chose.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    Bool(bool),
    String(String),
    Array(Vec<Value>),
}

impl Value {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }

    /// A whole number of any width and sign, when it is one.
    pub(crate) fn as_i64(&self) -> Option<i64> {
        Some(match *self {
            Value::U8(v) => v.into(),
            Value::I8(v) => v.into(),
            Value::U16(v) => v.into(),
            Value::I16(v) => v.into(),
            Value::U32(v) => v.into(),
            Value::I32(v) => v.into(),
            Value::U64(v) => i64::try_from(v).ok()?,
            Value::I64(v) => v,
            _ => return None,
        })
    }
}

/// GGML's tensor types that this engine reads (the numbers are the file's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TensorType {
    F32,
    F16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q2K,
    Q3K,
    Q4K,
    Q5K,
    Q6K,
    Bf16,
    /// A type the engine cannot read (the IQ formats, `Q8_1`, …): an error once it is read.
    Other(u32),
}

impl TensorType {
    fn from_id(id: u32) -> TensorType {
        match id {
            0 => TensorType::F32,
            1 => TensorType::F16,
            2 => TensorType::Q4_0,
            3 => TensorType::Q4_1,
            6 => TensorType::Q5_0,
            7 => TensorType::Q5_1,
            8 => TensorType::Q8_0,
            10 => TensorType::Q2K,
            11 => TensorType::Q3K,
            12 => TensorType::Q4K,
            13 => TensorType::Q5K,
            14 => TensorType::Q6K,
            30 => TensorType::Bf16,
            other => TensorType::Other(other),
        }
    }

    /// Values per block, and bytes per block; `None` for a type the engine cannot read.
    pub(crate) fn block(self) -> Option<(usize, usize)> {
        Some(match self {
            TensorType::F32 => (1, 4),
            TensorType::F16 | TensorType::Bf16 => (1, 2),
            TensorType::Q4_0 => (32, 18),
            TensorType::Q4_1 => (32, 20),
            TensorType::Q5_0 => (32, 22),
            TensorType::Q5_1 => (32, 24),
            TensorType::Q8_0 => (32, 34),
            TensorType::Q2K => (256, 84),
            TensorType::Q3K => (256, 110),
            TensorType::Q4K => (256, 144),
            TensorType::Q5K => (256, 176),
            TensorType::Q6K => (256, 210),
            TensorType::Other(_) => return None,
        })
    }
}

/// Where a tensor is and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TensorInfo {
    pub tensor_type: TensorType,
    /// The dimensions, outermost first (GGUF stores them innermost first): a matrix is
    /// `[rows, cols]`.
    pub shape: Vec<usize>,
    /// From the start of the tensor data.
    pub offset: u64,
}

/// A GGUF file's header: its metadata and where each tensor lies.
#[derive(Debug, Clone, Default)]
pub(crate) struct Content {
    pub metadata: HashMap<String, Value>,
    pub tensor_infos: HashMap<String, TensorInfo>,
    /// Where the tensor data starts, from the start of the file.
    pub tensor_data_offset: u64,
}

impl Content {
    /// Reads the header at the start of `file` (versions 1 to 3).
    pub(crate) fn read(file: &[u8]) -> Result<Content, String> {
        let mut reader = Reader { bytes: file, at: 0, version: 0 };
        if reader.take(4)? != b"GGUF" {
            return Err("it does not start with the GGUF magic".into());
        }
        reader.version = reader.u32()?;
        if !(1..=3).contains(&reader.version) {
            return Err(format!("GGUF version {} is not supported (1 to 3 are)", reader.version));
        }
        let tensor_count = reader.count()?;
        let metadata_count = reader.count()?;
        let mut metadata = HashMap::new();
        for _ in 0..metadata_count {
            let key = reader.string()?;
            let kind = reader.u32()?;
            let value = reader.value(kind, 0).map_err(|e| format!("metadata `{key}`: {e}"))?;
            if metadata.insert(key.clone(), value).is_some() {
                return Err(format!("metadata `{key}` appears twice"));
            }
        }
        let mut tensor_infos = HashMap::new();
        for _ in 0..tensor_count {
            let name = reader.string()?;
            let info = reader.tensor_info().map_err(|e| format!("tensor `{name}`: {e}"))?;
            if tensor_infos.insert(name.clone(), info).is_some() {
                return Err(format!("tensor `{name}` appears twice"));
            }
        }
        let alignment = match metadata.get("general.alignment") {
            None => DEFAULT_ALIGNMENT,
            Some(value) => value
                .as_i64()
                .and_then(|a| u64::try_from(a).ok())
                .filter(|a| a.is_power_of_two())
                .ok_or("`general.alignment` is not a power of two")?,
        };
        let tensor_data_offset = (reader.at as u64).next_multiple_of(alignment);
        Ok(Content { metadata, tensor_infos, tensor_data_offset })
    }
}

/// A cursor over the header's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    version: u32,
}

impl<'a> Reader<'a> {
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn take(&mut self, length: usize) -> Result<&'a [u8], String> {
        if length > self.left() {
            return Err("the file ends inside its header".into());
        }
        let taken = &self.bytes[self.at..self.at + length];
        self.at += length;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, String> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, String> {
        self.array().map(u64::from_le_bytes)
    }

    /// A count or length of items that each take at least `item_bytes`: 32 bits in version 1,
    /// 64 after; never more than the bytes left can hold, so nothing is allocated for a count
    /// the file cannot back.
    fn count_of(&mut self, item_bytes: usize) -> Result<usize, String> {
        let count = if self.version == 1 { u64::from(self.u32()?) } else { self.u64()? };
        usize::try_from(count)
            .ok()
            .filter(|&count| count <= self.left() / item_bytes.max(1))
            .ok_or_else(|| format!("a count of {count} is more than the file holds"))
    }

    fn count(&mut self) -> Result<usize, String> {
        self.count_of(1)
    }

    /// The fewest bytes a value of type `kind` takes (its length prefix, for a string or an
    /// array).
    fn smallest(&self, kind: u32) -> usize {
        let count = if self.version == 1 { 4 } else { 8 };
        match kind {
            0 | 1 | 7 => 1,
            2 | 3 => 2,
            4..=6 => 4,
            8 => count,
            9 => 4 + count,
            _ => 8,
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let length = self.count()?;
        let bytes = self.take(length)?;
        let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |last| last + 1);
        Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
    }

    fn value(&mut self, kind: u32, depth: usize) -> Result<Value, String> {
        Ok(match kind {
            0 => Value::U8(self.array::<1>()?[0]),
            1 => Value::I8(i8::from_le_bytes(self.array()?)),
            2 => Value::U16(u16::from_le_bytes(self.array()?)),
            3 => Value::I16(i16::from_le_bytes(self.array()?)),
            4 => Value::U32(self.u32()?),
            5 => Value::I32(i32::from_le_bytes(self.array()?)),
            6 => Value::F32(f32::from_le_bytes(self.array()?)),
            7 => match self.array::<1>()?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                other => return Err(format!("{other} is not a boolean")),
            },
            8 => Value::String(self.string()?),
            9 => {
                if depth == MAX_DEPTH {
                    return Err(format!("arrays nest more than {MAX_DEPTH} deep"));
                }
                let item = self.u32()?;
                let count = self.count_of(self.smallest(item))?;
                let mut items = Vec::with_capacity(count.min(1 << 16));
                for _ in 0..count {
                    items.push(self.value(item, depth + 1)?);
                }
                Value::Array(items)
            }
            10 => Value::U64(self.u64()?),
            11 => Value::I64(i64::from_le_bytes(self.array()?)),
            12 => Value::F64(f64::from_le_bytes(self.array()?)),
            other => return Err(format!("value type {other} is unknown")),
        })
    }

    fn tensor_info(&mut self) -> Result<TensorInfo, String> {
        let dims = self.u32()? as usize;
        if dims > MAX_DIMS {
            return Err(format!("{dims} dimensions (at most {MAX_DIMS})"));
        }
        let mut shape = Vec::with_capacity(dims);
        for _ in 0..dims {
            let size = if self.version == 1 { u64::from(self.u32()?) } else { self.u64()? };
            shape.push(usize::try_from(size).map_err(|_| format!("a dimension of {size}"))?);
        }
        shape.reverse();
        let tensor_type = TensorType::from_id(self.u32()?);
        Ok(TensorInfo { tensor_type, shape, offset: self.u64()? })
    }
}

#[cfg(test)]
mod tests;
