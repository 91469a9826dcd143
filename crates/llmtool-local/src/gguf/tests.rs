//! The reader on files written here byte by byte: every value type, tensors and alignment, and
//! damaged headers, which are errors (never panics or large allocations).

use super::*;

/// A GGUF header under construction (version 3 unless changed).
struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    fn new(version: u32, tensors: u64, keys: u64) -> Writer {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend(version.to_le_bytes());
        bytes.extend(tensors.to_le_bytes());
        bytes.extend(keys.to_le_bytes());
        Writer { bytes }
    }

    fn string(mut self, text: &str) -> Writer {
        self.bytes.extend((text.len() as u64).to_le_bytes());
        self.bytes.extend(text.as_bytes());
        self
    }

    fn raw(mut self, bytes: &[u8]) -> Writer {
        self.bytes.extend(bytes);
        self
    }

    fn u32(self, value: u32) -> Writer {
        self.raw(&value.to_le_bytes())
    }

    fn u64(self, value: u64) -> Writer {
        self.raw(&value.to_le_bytes())
    }
}

#[test]
fn reads_every_value_type_and_the_tensors() {
    let file = Writer::new(3, 2, 14)
        .string("u8")
        .u32(0)
        .raw(&[200])
        .string("i8")
        .u32(1)
        .raw(&[0xFF])
        .string("u16")
        .u32(2)
        .raw(&500u16.to_le_bytes())
        .string("i16")
        .u32(3)
        .raw(&(-500i16).to_le_bytes())
        .string("u32")
        .u32(4)
        .u32(70_000)
        .string("i32")
        .u32(5)
        .raw(&(-70_000i32).to_le_bytes())
        .string("f32")
        .u32(6)
        .raw(&1.5f32.to_le_bytes())
        .string("bool")
        .u32(7)
        .raw(&[1])
        .string("general.name")
        .u32(8)
        .string("tiny")
        .string("strings")
        .u32(9)
        .u32(8)
        .u64(2)
        .string("a")
        .string("bc")
        .string("u64")
        .u32(10)
        .u64(1 << 40)
        .string("i64")
        .u32(11)
        .raw(&(-1i64).to_le_bytes())
        .string("f64")
        .u32(12)
        .raw(&0.25f64.to_le_bytes())
        .string("general.alignment")
        .u32(4)
        .u32(64)
        .string("token_embd.weight")
        .u32(2)
        .u64(64)
        .u64(10)
        .u32(8)
        .u64(0)
        .string("output_norm.weight")
        .u32(1)
        .u64(64)
        .u32(0)
        .u64(680)
        .bytes;
    let content = Content::read(&file).unwrap_or_else(|e| panic!("{e}"));
    let get = |key: &str| content.metadata[key].clone();
    assert_eq!(get("u8"), Value::U8(200));
    assert_eq!(get("i8"), Value::I8(-1));
    assert_eq!(get("u16"), Value::U16(500));
    assert_eq!(get("i16"), Value::I16(-500));
    assert_eq!(get("u32").as_i64(), Some(70_000));
    assert_eq!(get("i32").as_i64(), Some(-70_000));
    assert_eq!(get("f32"), Value::F32(1.5));
    assert_eq!(get("bool"), Value::Bool(true));
    assert_eq!(get("general.name").as_str(), Some("tiny"));
    assert_eq!(
        get("strings"),
        Value::Array(vec![Value::String("a".into()), Value::String("bc".into())])
    );
    assert_eq!(get("u64").as_i64(), Some(1 << 40));
    assert_eq!(get("i64").as_i64(), Some(-1));
    assert_eq!(get("f64"), Value::F64(0.25));
    // GGUF lists dimensions innermost first; a matrix reads as rows × columns.
    let embeddings = &content.tensor_infos["token_embd.weight"];
    assert_eq!(embeddings.shape, [10, 64]);
    assert_eq!(embeddings.tensor_type, TensorType::Q8_0);
    assert_eq!(content.tensor_infos["output_norm.weight"].offset, 680);
    assert_eq!(content.tensor_data_offset, (file.len() as u64).next_multiple_of(64));
}

#[test]
fn strings_are_read_as_llama_cpp_reads_them() {
    let file = Writer::new(3, 0, 2)
        .string("bytes")
        .u32(8)
        .u64(2)
        .raw(&[0xC3, 0x28])
        .string("padded")
        .u32(8)
        .u64(4)
        .raw(b"ab\0\0")
        .bytes;
    let content = Content::read(&file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(content.metadata["bytes"].as_str(), Some("\u{fffd}("));
    assert_eq!(content.metadata["padded"].as_str(), Some("ab"));
}

#[test]
fn version_one_counts_in_32_bits() {
    let mut file = b"GGUF".to_vec();
    file.extend(1u32.to_le_bytes());
    file.extend(0u32.to_le_bytes());
    file.extend(1u32.to_le_bytes());
    file.extend(4u32.to_le_bytes());
    file.extend(b"name");
    file.extend(8u32.to_le_bytes());
    file.extend(2u32.to_le_bytes());
    file.extend(b"v1");
    let content = Content::read(&file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(content.metadata["name"].as_str(), Some("v1"));
    assert_eq!(content.tensor_data_offset, (file.len() as u64).next_multiple_of(32));
}

#[test]
fn a_tensor_of_another_type_is_listed_and_unreadable() {
    let file = Writer::new(3, 1, 0).string("iq").u32(1).u64(256).u32(19).u64(0).bytes;
    let content = Content::read(&file).unwrap_or_else(|e| panic!("{e}"));
    let info = &content.tensor_infos["iq"];
    assert_eq!(info.tensor_type, TensorType::Other(19));
    assert_eq!(info.tensor_type.block(), None);
}

fn error(file: &[u8]) -> String {
    match Content::read(file) {
        Ok(content) => panic!("read a damaged header: {content:?}"),
        Err(error) => error,
    }
}

#[test]
fn damaged_headers_are_errors() {
    assert_eq!(error(b"GGML\x03\0\0\0"), "it does not start with the GGUF magic");
    assert_eq!(error(b"GG"), "the file ends inside its header");
    assert!(error(&Writer::new(4, 0, 0).bytes).contains("version 4"));
    // Counts and lengths larger than what is left are refused before anything is allocated.
    assert!(error(&Writer::new(3, u64::MAX, 0).bytes).contains("more than the file holds"));
    assert!(error(&Writer::new(3, 0, 1).u64(u64::MAX).bytes).contains("more than the file holds"));
    let huge_array = Writer::new(3, 0, 1).string("a").u32(9).u32(0).u64(1 << 60).bytes;
    assert!(error(&huge_array).contains("more than the file holds"));
    let truncated = Writer::new(3, 0, 1).string("a").u32(4).raw(&[1, 2]).bytes;
    assert_eq!(error(&truncated), "metadata `a`: the file ends inside its header");
    let bad_bool = Writer::new(3, 0, 1).string("b").u32(7).raw(&[2]).bytes;
    assert_eq!(error(&bad_bool), "metadata `b`: 2 is not a boolean");
    let unknown = Writer::new(3, 0, 1).string("c").u32(13).bytes;
    assert_eq!(error(&unknown), "metadata `c`: value type 13 is unknown");
    // An array of a billion strings needs at least 8 GB for their lengths alone.
    let many_strings =
        Writer::new(3, 0, 1).string("s").u32(9).u32(8).u64(1 << 30).raw(&[0; 64]).bytes;
    assert!(error(&many_strings).contains("more than the file holds"));
    let twice =
        Writer::new(3, 0, 2).string("k").u32(0).raw(&[1]).string("k").u32(0).raw(&[2]).bytes;
    assert_eq!(error(&twice), "metadata `k` appears twice");
    let dims = Writer::new(3, 1, 0).string("t").u32(5).bytes;
    assert_eq!(error(&dims), "tensor `t`: 5 dimensions (at most 4)");
    let alignment = Writer::new(3, 0, 1).string("general.alignment").u32(4).u32(24).bytes;
    assert_eq!(error(&alignment), "`general.alignment` is not a power of two");
}

#[test]
fn arrays_nest_a_bounded_depth() {
    let mut nested = Writer::new(3, 0, 1).string("deep");
    nested = nested.u32(9);
    for _ in 0..MAX_DEPTH {
        nested = nested.u32(9).u64(1);
    }
    let file = nested.u32(0).u64(1).raw(&[7]).bytes;
    assert!(error(&file).contains("arrays nest more than 4 deep"), "{}", error(&file));
}

#[test]
fn any_prefix_of_a_header_is_an_error_not_a_panic() {
    let file = Writer::new(3, 1, 1)
        .string("general.name")
        .u32(8)
        .string("x")
        .string("t")
        .u32(2)
        .u64(32)
        .u64(2)
        .u32(0)
        .u64(0)
        .bytes;
    assert!(Content::read(&file).is_ok());
    for end in 0..file.len() {
        assert!(Content::read(&file[..end]).is_err(), "a header cut at {end} bytes was read");
    }
}
