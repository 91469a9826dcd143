//! Weight matrices read from a GGUF file: Q4_1 and Q8_0 kept as they are (Q4_0 losslessly as
//! Q4_1), every other type dequantized by candle and requantized to Q8_0.

use std::io::Cursor;

use candle_core::Device;
use candle_core::quantized::GgmlDType;
use candle_core::quantized::gguf_file::Content;

use super::blocks::{BLOCK, BlockQ4_1, BlockQ8_0};
use crate::LocalError;

/// A row-major matrix of quantized blocks; each row is `cols / 32` blocks.
#[derive(Debug, Clone)]
pub(crate) struct Matrix {
    pub rows: usize,
    pub cols: usize,
    pub blocks: Blocks,
}

#[derive(Debug, Clone)]
pub(crate) enum Blocks {
    Q4_1(Vec<BlockQ4_1>),
    Q8_0(Vec<BlockQ8_0>),
}

impl Matrix {
    pub(crate) fn blocks_per_row(&self) -> usize {
        self.cols / BLOCK
    }

    /// Dequantizes row `row` into `out` (`cols` values).
    pub(crate) fn row(&self, row: usize, out: &mut [f32]) {
        let per_row = self.blocks_per_row();
        let range = row * per_row..(row + 1) * per_row;
        let chunks = out.chunks_exact_mut(BLOCK);
        match &self.blocks {
            Blocks::Q4_1(blocks) => chunks.zip(&blocks[range]).for_each(|(o, b)| b.dequantize(o)),
            Blocks::Q8_0(blocks) => chunks.zip(&blocks[range]).for_each(|(o, b)| b.dequantize(o)),
        }
    }

    /// The matrices' rows one after another (they have the same number of columns), so that one
    /// pass over the input computes them all. Mixed formats become Q8_0.
    pub(crate) fn stack(parts: Vec<Matrix>) -> Matrix {
        let rows = parts.iter().map(|m| m.rows).sum();
        let cols = parts[0].cols;
        let all_q4_1 = parts.iter().all(|m| matches!(m.blocks, Blocks::Q4_1(_)));
        let blocks = if all_q4_1 {
            Blocks::Q4_1(
                parts
                    .into_iter()
                    .flat_map(|m| match m.blocks {
                        Blocks::Q4_1(b) => b,
                        Blocks::Q8_0(_) => Vec::new(),
                    })
                    .collect(),
            )
        } else {
            Blocks::Q8_0(parts.into_iter().flat_map(Matrix::into_q8_0).collect())
        };
        Matrix { rows, cols, blocks }
    }

    fn into_q8_0(self) -> Vec<BlockQ8_0> {
        match self.blocks {
            Blocks::Q8_0(blocks) => blocks,
            Blocks::Q4_1(blocks) => {
                let mut values = [0.0f32; BLOCK];
                blocks
                    .iter()
                    .map(|b| {
                        b.dequantize(&mut values);
                        BlockQ8_0::quantize(&values)
                    })
                    .collect()
            }
        }
    }
}

/// Reads tensors out of a GGUF file held in memory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tensors<'a> {
    pub content: &'a Content,
    pub bytes: &'a [u8],
}

impl Tensors<'_> {
    pub(crate) fn has(&self, name: &str) -> bool {
        self.content.tensor_infos.contains_key(name)
    }

    /// The 2-D tensor `name` as a matrix of `rows` × `cols` (GGUF's order reversed, as candle reads it).
    pub(crate) fn matrix(&self, name: &str) -> Result<Matrix, LocalError> {
        let info = self.content.tensor_infos.get(name).ok_or_else(|| missing(name))?;
        let &[rows, cols] = info.shape.dims() else {
            return Err(LocalError::Model(format!(
                "tensor `{name}` has shape {:?}; a matrix was expected",
                info.shape.dims()
            )));
        };
        if cols % BLOCK != 0 {
            return Err(LocalError::Model(format!(
                "tensor `{name}` has rows of {cols} values, not a multiple of {BLOCK}"
            )));
        }
        let count = rows.checked_mul(cols / BLOCK).ok_or_else(|| {
            LocalError::Model(format!("tensor `{name}` is too large ({rows} × {cols})"))
        })?;
        let blocks = match info.ggml_dtype {
            GgmlDType::Q4_1 => {
                Blocks::Q4_1(self.parse(name, info.offset, count, 20, BlockQ4_1::parse)?)
            }
            GgmlDType::Q4_0 => {
                Blocks::Q4_1(self.parse(name, info.offset, count, 18, BlockQ4_1::parse_q4_0)?)
            }
            GgmlDType::Q8_0 => {
                Blocks::Q8_0(self.parse(name, info.offset, count, 34, BlockQ8_0::parse)?)
            }
            _ => Blocks::Q8_0(
                self.values(name)?.chunks_exact(BLOCK).map(BlockQ8_0::quantize).collect(),
            ),
        };
        Ok(Matrix { rows, cols, blocks })
    }

    /// Every value of tensor `name`, dequantized (for norms and other vectors).
    pub(crate) fn values(&self, name: &str) -> Result<Vec<f32>, LocalError> {
        let device = Device::Cpu;
        self.content
            .tensor(&mut Cursor::new(self.bytes), name, &device)
            .and_then(|t| t.dequantize(&device))
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| {
                LocalError::Model(format!("cannot read tensor `{name}`: {}", super::message(&e)))
            })
    }

    fn parse<B>(
        &self,
        name: &str,
        offset: u64,
        count: usize,
        size: usize,
        parse: fn(&[u8]) -> B,
    ) -> Result<Vec<B>, LocalError> {
        // Sizes come from the file: computed without overflow, so a damaged file is an error.
        let data = self
            .content
            .tensor_data_offset
            .checked_add(offset)
            .and_then(|start| usize::try_from(start).ok())
            .and_then(|start| Some(start..start.checked_add(count.checked_mul(size)?)?))
            .and_then(|range| self.bytes.get(range))
            .ok_or_else(|| {
                LocalError::Model(format!("tensor `{name}` runs past the end of the file"))
            })?;
        Ok(data.chunks_exact(size).map(parse).collect())
    }
}

fn missing(name: &str) -> LocalError {
    LocalError::Model(format!("the GGUF file has no tensor `{name}`"))
}
