//! Rows regrouped eight at a time, as llama.cpp's CPU back end does before multiplying.
//!
//! A kernel that walks one row multiplies a block of its codes with a token's activations and
//! then spends as many instructions again on that block's scale, its offset and the row's final
//! sum. In a regrouped block the same block of eight neighbouring rows is interleaved four
//! bytes at a time: one 32-byte load holds four (or, with 4-bit codes, eight) codes of each of
//! the eight rows, one activation word broadcast to all lanes multiplies them all, and each
//! 32-bit lane stays one row's sum to the end. Scales, offsets and the final sums are then paid
//! once per eight rows (`kernels/x86.rs`).
//!
//! Every format the kernels take is regrouped but Q5_K (rare), and Q6_K only where the CPU
//! has AVX-512 VNNI (an AVX2 kernel for regrouped Q6_K rows was slower than the row-by-row
//! one, measured; the VNNI one is faster). A regrouped matrix is a copy (the mapped file's
//! blocks cannot be used in place), made at load, of the same size as the blocks it came from
//! (Q4_K's: 3% more, its scales unpacked).

mod blocks32;
mod q4k;
mod q6k;

use rayon::prelude::*;

pub(crate) use blocks32::{BlockQ4_0x8, BlockQ4_1x8, BlockQ5_0x8, BlockQ5_1x8, BlockQ8_0x8};
pub(crate) use q4k::BlockQ4Kx8;
pub(crate) use q6k::BlockQ6Kx8;

use super::blocks::Stored;

/// Rows in a group.
pub(crate) const ROWS: usize = 8;

/// One block of each of eight rows of a matrix of `Source` blocks, regrouped.
pub(crate) trait Grouped: Stored + Send {
    type Source: Stored + Sync;

    /// The eight rows' blocks, rows 0 to 7, as one.
    fn interleave(rows: [&Self::Source; ROWS]) -> Self;

    /// Row `row`'s values (`Source::VALUES` of them), exactly those of the block it came from.
    fn dequantize_row(&self, row: usize, out: &mut [f32]);
}

/// Regroups a matrix of `per_row` blocks a row (its rows a multiple of [`ROWS`]) into `out`
/// (an eighth as many blocks): group by group, each group's blocks in order. The groups are
/// regrouped in parallel: a 1.5B model's take a second on one core.
pub(crate) fn regroup<G: Grouped>(blocks: &[G::Source], per_row: usize, out: &mut [G]) {
    debug_assert_eq!(out.len() * ROWS, blocks.len());
    out.par_chunks_mut(per_row).zip(blocks.par_chunks(ROWS * per_row)).for_each(|(out, rows)| {
        for (at, out) in out.iter_mut().enumerate() {
            *out = G::interleave(std::array::from_fn(|r| &rows[r * per_row + at]));
        }
    });
}

/// Writes each row's bytes into `out` four at a time: `out[32 × c + 4 × row + i]` = byte
/// `4 × c + i` of `rows[row]`, so that chunk `c` holds the same four bytes of every row.
fn interleave_words(rows: [&[u8]; ROWS], out: &mut [u8]) {
    for (r, row) in rows.iter().enumerate() {
        for (chunk, bytes) in row.chunks_exact(4).enumerate() {
            out[32 * chunk + 4 * r..][..4].copy_from_slice(bytes);
        }
    }
}

/// Row `row`'s bytes back out of [`interleave_words`]' layout.
fn row_of_words(grouped: &[u8], row: usize, out: &mut [u8]) {
    for (chunk, bytes) in out.chunks_exact_mut(4).enumerate() {
        bytes.copy_from_slice(&grouped[32 * chunk + 4 * row..][..4]);
    }
}

/// A grouped block is a block of eight rows' values, row after row.
macro_rules! stored_by_rows {
    ($($grouped:ty),*) => {$(
        impl Stored for $grouped {
            const VALUES: usize = <<$grouped as Grouped>::Source as Stored>::VALUES * ROWS;
            fn dequantize(&self, out: &mut [f32]) {
                let per_row = Self::VALUES / ROWS;
                for (row, out) in out.chunks_exact_mut(per_row).enumerate() {
                    self.dequantize_row(row, out);
                }
            }
        }
    )*};
}

stored_by_rows!(
    BlockQ4Kx8,
    BlockQ6Kx8,
    BlockQ4_0x8,
    BlockQ4_1x8,
    BlockQ5_0x8,
    BlockQ5_1x8,
    BlockQ8_0x8
);

#[cfg(test)]
mod tests;
