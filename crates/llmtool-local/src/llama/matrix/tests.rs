//! Each stored format read as the `gguf` package's own dequantizer reads it, on the matrices
//! `scripts/reference_models.py` writes into `LLMTOOL_REFERENCE_MODELS` (random bytes, so that
//! every bit of a block counts).

use std::path::PathBuf;

use super::*;
use crate::model::read_gguf;

#[test]
fn every_format_reads_as_the_gguf_package_reads_it() {
    let folder = std::env::var_os("LLMTOOL_REFERENCE_MODELS").map(PathBuf::from).expect(
        "LLMTOOL_REFERENCE_MODELS names the reference models (scripts/reference_models.py writes them)",
    );
    let file = read_gguf(&folder.join("quants.gguf")).unwrap_or_else(|e| panic!("{e}"));
    let content = Content::read(&file).unwrap_or_else(|e| panic!("{e}"));
    let text =
        std::fs::read_to_string(folder.join("quants.json")).unwrap_or_else(|e| panic!("{e}"));
    let reference: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let tensors = Tensors { content: &content, file: &file };
    let mut checked = Vec::new();
    for (name, values) in &reference {
        let expected: Vec<f32> = values
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_f64)
            .map(|v| v as f32)
            .collect();
        let matrix = tensors.matrix(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let native = Format::of(content.tensor_infos[name].tensor_type).is_some();
        assert!(native || matrix.parts[0].format == Format::Q8_0, "{name} is requantized to Q8_0");
        let mut row = vec![0.0f32; matrix.cols];
        for (r, expected) in expected.chunks_exact(matrix.cols).enumerate() {
            matrix.row(r, &mut row);
            let largest = expected.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            // Formats read as stored give gguf's values exactly (but for float rounding); the
            // others are requantized to Q8_0 at load: half a step of 1/127 of the largest,
            // and the rounding of that step to f16.
            let tolerance = if native { 1e-6 * largest } else { 0.6 * largest / 127.0 };
            for (i, (ours, theirs)) in row.iter().zip(expected).enumerate() {
                assert!(
                    (ours - theirs).abs() <= tolerance,
                    "{name}, row {r}, value {i}: {ours} where gguf reads {theirs}"
                );
            }
        }
        // Regrouped, the matrix reads the same, value for value.
        let prepared = matrix.clone().regrouped();
        let regrouped_as = match name.as_str() {
            "Q4_0" => Some(Format::Q4_0Rows8),
            "Q4_1" => Some(Format::Q4_1Rows8),
            "Q5_0" => Some(Format::Q5_0Rows8),
            "Q5_1" => Some(Format::Q5_1Rows8),
            "Q8_0" => Some(Format::Q8_0Rows8),
            "Q4_K" => Some(Format::Q4KRows8),
            "Q6_K" if crate::llama::kernels::regroup_q6k() => Some(Format::Q6KRows8),
            _ => None,
        };
        if let Some(format) = regrouped_as {
            assert_eq!(prepared.parts[0].format, format, "{name} is regrouped");
        }
        // The others (those read as stored) stay in the file: nothing is copied for them.
        let in_file = |m: &Matrix| matches!(m.parts[0].data, Data::InFile { .. });
        if native && regrouped_as.is_none() {
            assert!(in_file(&matrix));
            assert!(in_file(&prepared), "{name} stays in the file");
        }
        let mut again = vec![0.0f32; matrix.cols];
        for r in 0..matrix.rows {
            matrix.row(r, &mut row);
            prepared.row(r, &mut again);
            assert_eq!(row, again, "{name}, row {r}, once prepared for the kernels");
        }
        checked.push(name.as_str());
    }
    checked.sort_unstable();
    assert_eq!(
        checked,
        [
            "BF16", "F16", "Q2_K", "Q3_K", "Q4_0", "Q4_1", "Q4_K", "Q5_0", "Q5_1", "Q5_K", "Q6_K",
            "Q8_0"
        ]
    );
}
