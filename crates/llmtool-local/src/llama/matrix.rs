//! Weight matrices read from a GGUF file. The formats the kernels take (Q4_0, Q4_1, Q5_0, Q5_1,
//! Q8_0, Q4_K, Q5_K, Q6_K) are used where they lie in the mapped file, without a copy; every
//! other format (F32, F16, BF16, Q2_K, Q3_K) is dequantized (`dequantize.rs`) and requantized
//! to Q8_0 at load. Where the CPU has the kernels for it, the matrices multiplied are regrouped
//! eight rows at a time at load (`repack/`).

use std::ops::Range;

use super::blocks::{
    BLOCK, BlockQ4_0, BlockQ4_1, BlockQ4K, BlockQ5_0, BlockQ5_1, BlockQ5K, BlockQ6K, BlockQ8_0,
    Forms, Stored,
};
use super::repack::{
    self, BlockQ4_0x8, BlockQ4_1x8, BlockQ4Kx8, BlockQ5_0x8, BlockQ5_1x8, BlockQ6Kx8, BlockQ8_0x8,
    Grouped, ROWS,
};
use crate::LocalError;
use crate::gguf::{Content, TensorInfo, TensorType};
use crate::model::FileBytes;

/// How a part's blocks are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q4K,
    Q5K,
    Q6K,
    /// Rows regrouped eight at a time (see `repack/`).
    Q4_0Rows8,
    Q4_1Rows8,
    Q5_0Rows8,
    Q5_1Rows8,
    Q8_0Rows8,
    Q4KRows8,
    Q6KRows8,
}

impl Format {
    /// The format of a GGUF type the kernels take as it is.
    fn of(tensor_type: TensorType) -> Option<Format> {
        Some(match tensor_type {
            TensorType::Q4_0 => Format::Q4_0,
            TensorType::Q4_1 => Format::Q4_1,
            TensorType::Q5_0 => Format::Q5_0,
            TensorType::Q5_1 => Format::Q5_1,
            TensorType::Q8_0 => Format::Q8_0,
            TensorType::Q4K => Format::Q4K,
            TensorType::Q5K => Format::Q5K,
            TensorType::Q6K => Format::Q6K,
            _ => return None,
        })
    }

    /// Whether it is a 32-value format regrouped by eight rows.
    pub(crate) fn is_regrouped_blocks(self) -> bool {
        matches!(
            self,
            Format::Q4_0Rows8
                | Format::Q4_1Rows8
                | Format::Q5_0Rows8
                | Format::Q5_1Rows8
                | Format::Q8_0Rows8
        )
    }

    /// Values per block, and bytes per block.
    pub(crate) fn block(self) -> (usize, usize) {
        fn of<B: Stored>() -> (usize, usize) {
            (B::VALUES, std::mem::size_of::<B>())
        }
        match self {
            Format::Q4_0 => of::<BlockQ4_0>(),
            Format::Q4_1 => of::<BlockQ4_1>(),
            Format::Q5_0 => of::<BlockQ5_0>(),
            Format::Q5_1 => of::<BlockQ5_1>(),
            Format::Q8_0 => of::<BlockQ8_0>(),
            Format::Q4K => of::<BlockQ4K>(),
            Format::Q5K => of::<BlockQ5K>(),
            Format::Q6K => of::<BlockQ6K>(),
            Format::Q4_0Rows8 => of::<BlockQ4_0x8>(),
            Format::Q4_1Rows8 => of::<BlockQ4_1x8>(),
            Format::Q5_0Rows8 => of::<BlockQ5_0x8>(),
            Format::Q5_1Rows8 => of::<BlockQ5_1x8>(),
            Format::Q8_0Rows8 => of::<BlockQ8_0x8>(),
            Format::Q4KRows8 => of::<BlockQ4Kx8>(),
            Format::Q6KRows8 => of::<BlockQ6Kx8>(),
        }
    }
}

/// Where a part's bytes are: a range of the mapped file, or bytes of its own (requantized).
#[derive(Debug, Clone)]
enum Data {
    InFile {
        file: FileBytes,
        range: Range<usize>,
    },
    Own(std::sync::Arc<[u8]>),
    /// Bytes of its own in an anonymous mapping (see [`Data::own`]).
    #[cfg(target_os = "linux")]
    Mapped(std::sync::Arc<memmap2::MmapMut>),
}

impl Data {
    /// `len` bytes of its own, written by `fill`. On Linux they are an anonymous mapping, whose
    /// pages the kernel hands over zeroed as `fill` first writes them (one pass over the bytes,
    /// not two), and which goes back to the system whole when the model is dropped. Elsewhere,
    /// or if the mapping fails, a plain allocation.
    ///
    /// The mapping does not ask for huge pages; the system's own setting decides, as it does
    /// for llama.cpp's buffers. Asking made the 1.5B model's load 2.6 to 3.0 times slower on
    /// the benchmark machine (2.56 to 2.85 s against 0.94 to 1.00 s, six pairs), where memory
    /// freed by the process before comes back slowly in 2 MiB pieces, and its decoding no faster
    /// (docs/benchmarks.md, "Huge pages for the weights, measured again").
    fn own(len: usize, fill: impl FnOnce(&mut [u8])) -> Data {
        #[cfg(target_os = "linux")]
        if let Ok(mut map) = memmap2::MmapMut::map_anon(len) {
            fill(&mut map);
            return Data::Mapped(std::sync::Arc::new(map));
        }
        // Allocated once, zeroed, then filled in place.
        let mut bytes: std::sync::Arc<[u8]> = std::iter::repeat_n(0, len).collect();
        if let Some(unique) = std::sync::Arc::get_mut(&mut bytes) {
            fill(unique);
        }
        Data::Own(bytes)
    }
}

/// Rows of a matrix stored one way.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    pub rows: usize,
    pub format: Format,
    data: Data,
}

impl Part {
    pub(crate) fn bytes(&self) -> &[u8] {
        match &self.data {
            Data::InFile { file, range } => &file[range.clone()],
            Data::Own(bytes) => bytes,
            #[cfg(target_os = "linux")]
            Data::Mapped(map) => map,
        }
    }

    /// The part's blocks, as `B` (which must be its format's block).
    pub(crate) fn blocks<B: Stored>(&self) -> &[B] {
        bytemuck::cast_slice(self.bytes())
    }
}

/// A row-major matrix: parts of rows one after another (a stacked matrix's are its sources'),
/// each row `cols` values.
#[derive(Debug, Clone)]
pub(crate) struct Matrix {
    pub rows: usize,
    pub cols: usize,
    pub parts: Vec<Part>,
}

impl Matrix {
    /// Dequantizes row `row` into `out` (`cols` values).
    pub(crate) fn row(&self, mut row: usize, out: &mut [f32]) {
        for part in &self.parts {
            if row >= part.rows {
                row -= part.rows;
                continue;
            }
            let (values, size) = part.format.block();
            // A regrouped part's group of blocks, each eight rows' `values`.
            let group = || &part.bytes()[row / ROWS * (self.cols * ROWS / values * size)..];
            let r = row % ROWS;
            match part.format {
                Format::Q4_0Rows8 => row_of_group::<BlockQ4_0x8>(group(), r, out),
                Format::Q4_1Rows8 => row_of_group::<BlockQ4_1x8>(group(), r, out),
                Format::Q5_0Rows8 => row_of_group::<BlockQ5_0x8>(group(), r, out),
                Format::Q5_1Rows8 => row_of_group::<BlockQ5_1x8>(group(), r, out),
                Format::Q8_0Rows8 => row_of_group::<BlockQ8_0x8>(group(), r, out),
                Format::Q4KRows8 => row_of_group::<BlockQ4Kx8>(group(), r, out),
                Format::Q6KRows8 => row_of_group::<BlockQ6Kx8>(group(), r, out),
                _ => {
                    let per_row = self.cols / values * size;
                    dequantize(part.format, &part.bytes()[row * per_row..][..per_row], out);
                }
            }
            return;
        }
    }

    /// The matrices' rows one after another, so that one pass over the input computes them all.
    /// Nothing is copied. The loader checks every matrix's columns before it stacks them.
    pub(crate) fn stack(parts: Vec<Matrix>) -> Matrix {
        debug_assert!(parts.windows(2).all(|pair| pair[0].cols == pair[1].cols));
        Matrix {
            rows: parts.iter().map(|m| m.rows).sum(),
            cols: parts.first().map_or(0, |m| m.cols),
            parts: parts.into_iter().flat_map(|m| m.parts).collect(),
        }
    }

    /// The matrix with its parts regrouped eight rows at a time for the kernels (a copy of
    /// those parts, whose pages in the mapped file are then let go). A part whose rows do not
    /// come in whole groups, or in a format that is not regrouped (Q5_K, and Q6_K without
    /// VNNI), stays in the file as it is.
    pub(crate) fn regrouped(self) -> Matrix {
        self.regrouped_with(super::kernels::regroup_q6k())
    }

    /// [`Matrix::regrouped`], its Q6_K parts too when `q6k` (only the VNNI kernels are faster
    /// on them regrouped).
    pub(crate) fn regrouped_with(self, q6k: bool) -> Matrix {
        fn regroup<G: Grouped>(part: &Part, cols: usize) -> Data {
            let per_row = cols / <G::Source as Stored>::VALUES;
            let blocks = part.blocks::<G::Source>();
            Data::own(blocks.len() / ROWS * size_of::<G>(), |bytes| {
                repack::regroup::<G>(blocks, per_row, bytemuck::cast_slice_mut(bytes));
            })
        }
        let cols = self.cols;
        let parts = self
            .parts
            .into_iter()
            .map(|part| {
                let (values, _) = part.format.block();
                if !part.rows.is_multiple_of(ROWS) || !cols.is_multiple_of(values) || cols == 0 {
                    return part;
                }
                let (format, data) = match part.format {
                    Format::Q4_0 => (Format::Q4_0Rows8, regroup::<BlockQ4_0x8>(&part, cols)),
                    Format::Q4_1 => (Format::Q4_1Rows8, regroup::<BlockQ4_1x8>(&part, cols)),
                    Format::Q5_0 => (Format::Q5_0Rows8, regroup::<BlockQ5_0x8>(&part, cols)),
                    Format::Q5_1 => (Format::Q5_1Rows8, regroup::<BlockQ5_1x8>(&part, cols)),
                    Format::Q8_0 => (Format::Q8_0Rows8, regroup::<BlockQ8_0x8>(&part, cols)),
                    Format::Q4K => (Format::Q4KRows8, regroup::<BlockQ4Kx8>(&part, cols)),
                    Format::Q6K if q6k => (Format::Q6KRows8, regroup::<BlockQ6Kx8>(&part, cols)),
                    _ => return part,
                };
                if let Data::InFile { file, range } = &part.data {
                    file.forget(range.clone());
                }
                Part { rows: part.rows, format, data }
            })
            .collect();
        Matrix { parts, ..self }
    }

    /// The forms of activations its parts' kernels take.
    pub(crate) fn forms(&self) -> Forms {
        let takes_supers = |part: &Part| {
            matches!(
                part.format,
                Format::Q4K | Format::Q5K | Format::Q6K | Format::Q4KRows8 | Format::Q6KRows8
            )
        };
        Forms {
            blocks: !self.parts.iter().all(takes_supers),
            supers: self.parts.iter().any(takes_supers),
        }
    }

    /// The parts that hold rows `rows`, each with the range of its own rows and where they
    /// start in `rows`.
    pub(crate) fn spans(&self, rows: Range<usize>) -> impl Iterator<Item = Span<'_>> {
        let mut start = 0;
        self.parts.iter().filter_map(move |part| {
            let first = start;
            start += part.rows;
            let (from, to) = (rows.start.max(first), rows.end.min(start));
            (from < to).then(|| Span {
                part,
                rows: from - first..to - first,
                at: from - rows.start,
            })
        })
    }
}

/// Rows `rows` of `part`, which are rows `at..` of a range asked for.
pub(crate) struct Span<'a> {
    pub part: &'a Part,
    pub rows: Range<usize>,
    pub at: usize,
}

/// Dequantizes `bytes`, whole blocks of `format`, into `out` (rows regrouped by eight: each
/// block's eight rows in turn).
pub(crate) fn dequantize(format: Format, bytes: &[u8], out: &mut [f32]) {
    fn each<B: Stored>(bytes: &[u8], out: &mut [f32]) {
        let blocks: &[B] = bytemuck::cast_slice(bytes);
        for (block, out) in blocks.iter().zip(out.chunks_exact_mut(B::VALUES)) {
            block.dequantize(out);
        }
    }
    match format {
        Format::Q4_0 => each::<BlockQ4_0>(bytes, out),
        Format::Q4_1 => each::<BlockQ4_1>(bytes, out),
        Format::Q5_0 => each::<BlockQ5_0>(bytes, out),
        Format::Q5_1 => each::<BlockQ5_1>(bytes, out),
        Format::Q8_0 => each::<BlockQ8_0>(bytes, out),
        Format::Q4K => each::<BlockQ4K>(bytes, out),
        Format::Q5K => each::<BlockQ5K>(bytes, out),
        Format::Q6K => each::<BlockQ6K>(bytes, out),
        Format::Q4_0Rows8 => each::<BlockQ4_0x8>(bytes, out),
        Format::Q4_1Rows8 => each::<BlockQ4_1x8>(bytes, out),
        Format::Q5_0Rows8 => each::<BlockQ5_0x8>(bytes, out),
        Format::Q5_1Rows8 => each::<BlockQ5_1x8>(bytes, out),
        Format::Q8_0Rows8 => each::<BlockQ8_0x8>(bytes, out),
        Format::Q4KRows8 => each::<BlockQ4Kx8>(bytes, out),
        Format::Q6KRows8 => each::<BlockQ6Kx8>(bytes, out),
    }
}

/// Dequantizes row `row` (of eight) of the group whose blocks start `bytes`, into `out` (as
/// many values as it holds).
fn row_of_group<G: Grouped>(bytes: &[u8], row: usize, out: &mut [f32]) {
    let values = <G::Source as Stored>::VALUES;
    let blocks: &[G] = bytemuck::cast_slice(&bytes[..out.len() / values * size_of::<G>()]);
    for (block, out) in blocks.iter().zip(out.chunks_exact_mut(values)) {
        block.dequantize_row(row, out);
    }
}

/// Reads tensors out of a GGUF file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tensors<'a> {
    pub content: &'a Content,
    pub file: &'a FileBytes,
}

impl Tensors<'_> {
    pub(crate) fn has(&self, name: &str) -> bool {
        self.content.tensor_infos.contains_key(name)
    }

    /// The 2-D tensor `name` as a matrix of `rows` × `cols`.
    pub(crate) fn matrix(&self, name: &str) -> Result<Matrix, LocalError> {
        let info = self.content.tensor_infos.get(name).ok_or_else(|| missing(name))?;
        let &[rows, cols] = info.shape.as_slice() else {
            return Err(LocalError::Model(format!(
                "tensor `{name}` has shape {:?}; a matrix was expected",
                info.shape
            )));
        };
        if rows == 0 || cols % BLOCK != 0 {
            return Err(LocalError::Model(format!(
                "tensor `{name}` has {rows} rows of {cols} values; rows of a multiple of {BLOCK} were expected"
            )));
        }
        let too_large =
            || LocalError::Model(format!("tensor `{name}` is too large ({rows} × {cols})"));
        let part = match Format::of(info.tensor_type) {
            Some(format) => {
                let (values, size) = format.block();
                if cols % values != 0 {
                    return Err(LocalError::Model(format!(
                        "tensor `{name}` has rows of {cols} values, not whole blocks of {values}"
                    )));
                }
                let length = rows
                    .checked_mul(cols / values)
                    .and_then(|blocks| blocks.checked_mul(size))
                    .ok_or_else(too_large)?;
                let range = self.range(name, info, length)?;
                Part { rows, format, data: Data::InFile { file: self.file.clone(), range } }
            }
            None => {
                rows.checked_mul(cols).ok_or_else(too_large)?;
                let blocks: Vec<BlockQ8_0> =
                    self.values(name)?.chunks_exact(BLOCK).map(BlockQ8_0::quantize).collect();
                let bytes: &[u8] = bytemuck::cast_slice(&blocks);
                Part { rows, format: Format::Q8_0, data: Data::Own(bytes.into()) }
            }
        };
        Ok(Matrix { rows, cols, parts: vec![part] })
    }

    /// Every value of tensor `name`, dequantized (for norms and other vectors).
    pub(crate) fn values(&self, name: &str) -> Result<Vec<f32>, LocalError> {
        let info = self.content.tensor_infos.get(name).ok_or_else(|| missing(name))?;
        let unreadable = || {
            LocalError::Model(format!(
                "tensor `{name}` is of a type this engine cannot read ({:?})",
                info.tensor_type
            ))
        };
        let (values, size) = info.tensor_type.block().ok_or_else(unreadable)?;
        // Whole blocks in every row: a block never spans two rows.
        let count = info.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let whole_rows = info.shape.last().is_none_or(|cols| cols % values == 0);
        let count = count.filter(|n| n % values == 0 && whole_rows).ok_or_else(|| {
            LocalError::Model(format!(
                "tensor `{name}` has shape {:?}, not whole blocks of {values}",
                info.shape
            ))
        })?;
        let length = (count / values).checked_mul(size).ok_or_else(|| {
            LocalError::Model(format!("tensor `{name}` is too large ({:?})", info.shape))
        })?;
        let range = self.range(name, info, length)?;
        super::dequantize::values(info.tensor_type, &self.file[range], count).ok_or_else(unreadable)
    }

    /// Where the `length` bytes of tensor `name` lie in the file. Offsets come from the file:
    /// computed without overflow, so a damaged file is an error.
    fn range(
        &self,
        name: &str,
        info: &TensorInfo,
        length: usize,
    ) -> Result<Range<usize>, LocalError> {
        self.content
            .tensor_data_offset
            .checked_add(info.offset)
            .and_then(|start| usize::try_from(start).ok())
            .and_then(|start| Some(start..start.checked_add(length)?))
            .filter(|range| range.end <= self.file.len())
            .ok_or_else(|| {
                LocalError::Model(format!("tensor `{name}` runs past the end of the file"))
            })
    }
}

fn missing(name: &str) -> LocalError {
    LocalError::Model(format!("the GGUF file has no tensor `{name}`"))
}

#[cfg(test)]
impl Matrix {
    /// A matrix of one part holding `bytes` (whole blocks of `format`), for tests.
    pub(crate) fn of_bytes(format: Format, rows: usize, cols: usize, bytes: Vec<u8>) -> Matrix {
        let data = Data::Own(bytes.into());
        Matrix { rows, cols, parts: vec![Part { rows, format, data }] }
    }
}

#[cfg(test)]
mod tests;
