//! Whole tensors read as `f32`, whatever their stored type: the vectors (norms, biases) and the
//! matrices in a format the kernels do not take, which `matrix` requantizes to Q8_0 at load.
//! The 2- and 3-bit K formats are defined here, as they are only ever read this way.

use bytemuck::{Pod, Zeroable};
use half::{bf16, f16};

use super::blocks::{
    BlockQ4_0, BlockQ4_1, BlockQ4K, BlockQ5_0, BlockQ5_1, BlockQ5K, BlockQ6K, BlockQ8_0, SUPER,
    Stored, half,
};
use crate::gguf::TensorType;

/// 256 weights in sixteen runs of 16, each with a 4-bit scale and a 4-bit minimum
/// (`scales[run]`, low nibble and high nibble): value = `d` × scale × code − `dmin` × min, codes
/// 2-bit. Byte `b` of a half's 32 bytes of `qs` holds, in its bit pairs from the lowest, the
/// codes of value `b` of the half's four quarters of 32.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ2K {
    pub scales: [u8; 16],
    pub qs: [u8; 64],
    pub d: [u8; 2],
    pub dmin: [u8; 2],
}

/// 256 weights in sixteen runs of 16, each with a signed 6-bit scale (stored as scale + 32, see
/// [`BlockQ3K::scale`]): value = `d` × scale × (code − 4), codes 3-bit: two low bits laid out
/// as in [`BlockQ2K`], and a third bit from `hmask` (bit `q` of byte `b` for value `b` of
/// quarter `q`), set for the upper half of the range.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ3K {
    pub hmask: [u8; 32],
    pub qs: [u8; 64],
    pub scales: [u8; 12],
    pub d: [u8; 2],
}

/// The value index, the `qs` byte and the bit shift of each of a 2- or 3-bit K block's values:
/// for each half of 128, each quarter of 32 within it, each run of 16.
fn two_bit_layout() -> impl Iterator<Item = (usize, usize, usize)> {
    (0..2).flat_map(|half| {
        (0..4).flat_map(move |quarter| {
            (0..32).map(move |i| (half * 128 + quarter * 32 + i, half * 32 + i, 2 * quarter))
        })
    })
}

impl Stored for BlockQ2K {
    const VALUES: usize = SUPER;
    fn dequantize(&self, out: &mut [f32]) {
        let (d, dmin) = (half(self.d), half(self.dmin));
        for (index, byte, shift) in two_bit_layout() {
            let run = self.scales[index / 16];
            let code = (self.qs[byte] >> shift) & 3;
            out[index] = d * f32::from(run & 0x0F) * f32::from(code) - dmin * f32::from(run >> 4);
        }
    }
}

impl BlockQ3K {
    /// The scale of run `run` (0..16): its low four bits are a nibble of the first eight bytes
    /// (runs 0..8 the low nibbles, 8..16 the high ones), its high two bits a bit pair of the
    /// last four bytes (byte `run % 4`, pair `run / 4`).
    fn scale(&self, run: usize) -> f32 {
        let low = if run < 8 { self.scales[run] & 0x0F } else { self.scales[run - 8] >> 4 };
        let high = (self.scales[8 + run % 4] >> (2 * (run / 4))) & 3;
        f32::from(low | (high << 4)) - 32.0
    }
}

impl Stored for BlockQ3K {
    const VALUES: usize = SUPER;
    fn dequantize(&self, out: &mut [f32]) {
        let d = half(self.d);
        for (index, byte, shift) in two_bit_layout() {
            let quarter_of_all = index / 32;
            let upper = (self.hmask[index % 32] >> quarter_of_all) & 1 == 1;
            let code = f32::from((self.qs[byte] >> shift) & 3) - if upper { 0.0 } else { 4.0 };
            out[index] = d * self.scale(index / 16) * code;
        }
    }
}

/// The `count` values stored in `bytes` as `tensor_type` (`bytes` holds exactly their blocks);
/// `None` for a type this engine cannot read.
pub(crate) fn values(tensor_type: TensorType, bytes: &[u8], count: usize) -> Option<Vec<f32>> {
    fn blocks<B: Stored>(bytes: &[u8], count: usize) -> Vec<f32> {
        let mut out = vec![0.0; count];
        let blocks: &[B] = bytemuck::cast_slice(bytes);
        for (block, out) in blocks.iter().zip(out.chunks_exact_mut(B::VALUES)) {
            block.dequantize(out);
        }
        out
    }
    fn each<const N: usize>(bytes: &[u8], read: impl Fn([u8; N]) -> f32) -> Vec<f32> {
        bytes.chunks_exact(N).map(|c| read(c.try_into().unwrap_or([0; N]))).collect()
    }
    Some(match tensor_type {
        TensorType::F32 => each(bytes, f32::from_le_bytes),
        TensorType::F16 => each(bytes, |b| f16::from_le_bytes(b).to_f32()),
        TensorType::Bf16 => each(bytes, |b| bf16::from_le_bytes(b).to_f32()),
        TensorType::Q4_0 => blocks::<BlockQ4_0>(bytes, count),
        TensorType::Q4_1 => blocks::<BlockQ4_1>(bytes, count),
        TensorType::Q5_0 => blocks::<BlockQ5_0>(bytes, count),
        TensorType::Q5_1 => blocks::<BlockQ5_1>(bytes, count),
        TensorType::Q8_0 => blocks::<BlockQ8_0>(bytes, count),
        TensorType::Q2K => blocks::<BlockQ2K>(bytes, count),
        TensorType::Q3K => blocks::<BlockQ3K>(bytes, count),
        TensorType::Q4K => blocks::<BlockQ4K>(bytes, count),
        TensorType::Q5K => blocks::<BlockQ5K>(bytes, count),
        TensorType::Q6K => blocks::<BlockQ6K>(bytes, count),
        TensorType::Other(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::mem::size_of;

    use super::*;

    /// The sizes the reader computes tensor lengths with are the blocks' own.
    #[test]
    fn block_sizes_are_llama_cpps_and_the_readers() {
        assert_eq!(size_of::<BlockQ2K>(), 84);
        assert_eq!(size_of::<BlockQ3K>(), 110);
        let sizes = [
            (TensorType::Q4_0, size_of::<BlockQ4_0>()),
            (TensorType::Q4_1, size_of::<BlockQ4_1>()),
            (TensorType::Q5_0, size_of::<BlockQ5_0>()),
            (TensorType::Q5_1, size_of::<BlockQ5_1>()),
            (TensorType::Q8_0, size_of::<BlockQ8_0>()),
            (TensorType::Q2K, size_of::<BlockQ2K>()),
            (TensorType::Q3K, size_of::<BlockQ3K>()),
            (TensorType::Q4K, size_of::<BlockQ4K>()),
            (TensorType::Q5K, size_of::<BlockQ5K>()),
            (TensorType::Q6K, size_of::<BlockQ6K>()),
        ];
        for (tensor_type, size) in sizes {
            assert_eq!(tensor_type.block().map(|(_, bytes)| bytes), Some(size), "{tensor_type:?}");
        }
    }

    #[test]
    fn plain_floats_read_as_written() {
        let bytes: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(values(TensorType::F32, &bytes, 2), Some(vec![1.5, -2.0]));
        let halves: Vec<u8> =
            [0.5f32, 3.0].iter().flat_map(|v| f16::from_f32(*v).to_le_bytes()).collect();
        assert_eq!(values(TensorType::F16, &halves, 2), Some(vec![0.5, 3.0]));
        let brains: Vec<u8> =
            [0.25f32, -8.0].iter().flat_map(|v| bf16::from_f32(*v).to_le_bytes()).collect();
        assert_eq!(values(TensorType::Bf16, &brains, 2), Some(vec![0.25, -8.0]));
        assert_eq!(values(TensorType::Other(19), &[], 0), None);
    }
}
