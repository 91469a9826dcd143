//! Every format's kernels (AVX2 and portable) against the exact product of the dequantized
//! weights with the dequantized activations, on blocks of pseudo-random bytes.

use half::f16;

use super::*;
use crate::llama::blocks::Activations;

/// A generator of pseudo-random numbers (an LCG: enough to vary every bit of a block).
struct Numbers(u32);

impl Numbers {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        self.0 >> 8
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        self.next() as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
    }
}

/// `rows` × `cols` weights in `format`: random bytes, with every scale set to a small f16 (a
/// random f16 could be infinite or NaN) at the offsets the format keeps them.
fn random_matrix(format: Format, rows: usize, cols: usize, seed: u32) -> Matrix {
    let (values, size) = format.block();
    let blocks = rows * cols / values;
    let mut numbers = Numbers(seed);
    let mut bytes: Vec<u8> = (0..blocks * size).map(|_| numbers.next() as u8).collect();
    let scales: &[usize] = match format {
        Format::Q4_0 | Format::Q5_0 | Format::Q8_0 => &[0],
        Format::Q4_1 | Format::Q5_1 | Format::Q4K | Format::Q5K => &[0, 2],
        Format::Q6K => &[208],
        // Made by regrouping a matrix, never written as bytes.
        Format::Q4_0Rows8
        | Format::Q4_1Rows8
        | Format::Q5_0Rows8
        | Format::Q5_1Rows8
        | Format::Q8_0Rows8
        | Format::Q4KRows8
        | Format::Q6KRows8 => &[],
    };
    for block in bytes.chunks_exact_mut(size) {
        for &at in scales {
            let scale = f16::from_f32(0.001 + numbers.unit().abs() * 0.02);
            block[at..at + 2].copy_from_slice(&scale.to_le_bytes());
        }
    }
    Matrix::of_bytes(format, rows, cols, bytes)
}

/// The product of the dequantized matrix with the activations (as the 32-value blocks give
/// them), token-major, in f64.
fn reference(weights: &Matrix, xs: &[BlockQ8]) -> Vec<f32> {
    let mut row = vec![0.0; weights.cols];
    let mut rows = Vec::new();
    for r in 0..weights.rows {
        weights.row(r, &mut row);
        rows.push(row.clone());
    }
    let mut out = Vec::new();
    for x in xs.chunks_exact(weights.cols / BLOCK) {
        for row in &rows {
            let dot: f64 = x
                .iter()
                .flat_map(|b| b.qs.iter().map(move |q| f64::from(b.d) * f64::from(*q)))
                .zip(row)
                .map(|(a, w)| a * f64::from(*w))
                .sum();
            out.push(dot as f32);
        }
    }
    out
}

const FORMATS: [Format; 8] = [
    Format::Q4_0,
    Format::Q4_1,
    Format::Q5_0,
    Format::Q5_1,
    Format::Q8_0,
    Format::Q4K,
    Format::Q5K,
    Format::Q6K,
];

fn portable(weights: &Matrix, rows: Range<usize>, xs: Quantized<'_>, out: &mut [f32]) {
    let width = rows.len();
    for span in weights.spans(rows) {
        let target = Target { xs, width, at: span.at };
        multiply_portably(span.part, span.rows, &target, out);
    }
}

type Multiply = fn(&Matrix, Range<usize>, Quantized<'_>, &mut [f32]);

/// Within `tolerance` of the largest expected value (the K formats take activations quantized
/// per 256 values rather than per 32, which the reference uses: a little further off).
fn assert_close(ours: &[f32], expected: &[f32], tolerance: f32, what: &str) {
    let largest = expected.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    for (i, (a, b)) in ours.iter().zip(expected).enumerate() {
        assert!((a - b).abs() <= tolerance * largest.max(1.0), "{what}, value {i}: {a} vs {b}");
    }
}

fn tolerance(format: Format) -> f32 {
    if matches!(format, Format::Q4K | Format::Q5K | Format::Q6K) { 2e-2 } else { 1e-4 }
}

/// `n` tokens of `cols` pseudo-random activations, quantized.
fn activations(cols: usize, n: usize, seed: u32) -> Activations {
    let mut numbers = Numbers(seed);
    let values: Vec<f32> = (0..cols * n).map(|_| numbers.unit()).collect();
    let mut xs = Activations::default();
    xs.quantize(&values, cols);
    xs
}

#[test]
fn every_format_matches_the_dequantized_product() {
    let (rows, cols, n) = (12, 512, 3);
    let xs = activations(cols, n, 7);
    for (seed, format) in FORMATS.into_iter().enumerate() {
        let weights = random_matrix(format, rows, cols, seed as u32 + 1);
        let expected = reference(&weights, xs.all().blocks);
        let mut results = Vec::new();
        for (name, run) in [("dispatched", multiply as Multiply), ("portable", portable)] {
            let mut out = vec![0.0; rows * n];
            run(&weights, 0..rows, xs.all(), &mut out);
            assert_close(&out, &expected, tolerance(format), &format!("{format:?}, {name}"));
            // A range of rows: the same values, in a narrower token-major layout.
            let mut part = vec![0.0; 5 * n];
            run(&weights, 4..9, xs.all(), &mut part);
            for t in 0..n {
                assert_eq!(part[t * 5..t * 5 + 5], out[t * rows + 4..t * rows + 9], "{format:?}");
            }
            results.push(out);
        }
        // The SIMD and portable kernels compute the same integer sums: equal but for the
        // order of float additions.
        assert_close(&results[0], &results[1], 1e-4, &format!("{format:?}, SIMD against portable"));
    }
}

#[test]
fn a_stacked_matrix_of_mixed_formats_multiplies_across_its_parts() {
    let (cols, n) = (256, 2);
    let xs = activations(cols, n, 11);
    let stacked = Matrix::stack(vec![
        random_matrix(Format::Q5_0, 3, cols, 1),
        random_matrix(Format::Q6K, 4, cols, 2),
        random_matrix(Format::Q4K, 2, cols, 3),
    ]);
    assert_eq!(stacked.rows, 9);
    let expected = reference(&stacked, xs.all().blocks);
    let mut out = vec![0.0; 9 * n];
    multiply(&stacked, 0..9, xs.all(), &mut out);
    assert_close(&out, &expected, tolerance(Format::Q6K), "stacked");
    // Rows 2..8 cross all three parts.
    let mut part = vec![0.0; 6 * n];
    multiply(&stacked, 2..8, xs.all(), &mut part);
    for t in 0..n {
        assert_eq!(part[t * 6..t * 6 + 6], out[t * 9 + 2..t * 9 + 8]);
    }
}

/// The formats regrouped by eight, with what they become.
const REGROUPED: [(Format, Format); 7] = [
    (Format::Q4_0, Format::Q4_0Rows8),
    (Format::Q4_1, Format::Q4_1Rows8),
    (Format::Q5_0, Format::Q5_0Rows8),
    (Format::Q5_1, Format::Q5_1Rows8),
    (Format::Q8_0, Format::Q8_0Rows8),
    (Format::Q4K, Format::Q4KRows8),
    (Format::Q6K, Format::Q6KRows8),
];

#[test]
fn rows_regrouped_by_eight_multiply_as_the_rows_they_came_from() {
    let (rows, cols) = (24, 512);
    for (seed, (format, grouped)) in REGROUPED.into_iter().enumerate() {
        let weights = random_matrix(format, rows, cols, 11 + seed as u32);
        // Q6_K too, whether this CPU's kernels would regroup it or not.
        let regrouped = weights.clone().regrouped_with(true);
        assert_eq!(regrouped.parts[0].format, grouped);
        let (mut theirs, mut ours) = (vec![0.0; cols], vec![0.0; cols]);
        for row in [0, 7, 8, 23] {
            weights.row(row, &mut theirs);
            regrouped.row(row, &mut ours);
            assert_eq!(ours, theirs, "{format:?}, row {row}");
        }
        // One token, then two pairs and one (the kernels take tokens two at a time); all the
        // rows, then a range that cuts a group at both ends.
        for n in [1, 5] {
            let xs = activations(cols, n, 13);
            for range in [0..rows, 3..21] {
                let width = range.len();
                let mut expected = vec![0.0; width * n];
                multiply(&weights, range.clone(), xs.all(), &mut expected);
                for (name, run) in [("dispatched", multiply as Multiply), ("portable", portable)] {
                    let mut out = vec![0.0; width * n];
                    run(&regrouped, range.clone(), xs.all(), &mut out);
                    let what = format!("{format:?}, {name}, {n} tokens, rows {range:?}");
                    assert_close(&out, &expected, 1e-4, &what);
                }
            }
        }
    }
}

#[test]
fn a_tokens_products_are_the_same_whatever_goes_with_it() {
    // Rows decoded together must answer as rows decoded alone: each kernel gives a token the
    // same numbers, bit for bit, whether it is multiplied alone or with others (in twos,
    // fours, or left over at the end).
    let (rows, cols, n) = (24, 512, 7);
    for (seed, (format, _)) in REGROUPED.into_iter().enumerate() {
        let weights = random_matrix(format, rows, cols, 31 + seed as u32).regrouped_with(true);
        let xs = activations(cols, n, 37);
        let mut together = vec![0.0; rows * n];
        multiply(&weights, 0..rows, xs.all(), &mut together);
        for t in 0..n {
            let mut alone = vec![0.0; rows];
            multiply(&weights, 0..rows, xs.all().run(t..t + 1), &mut alone);
            let bits = |values: &[f32]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&alone), bits(&together[t * rows..][..rows]), "{format:?}, token {t}");
        }
    }
}

#[test]
fn products_at_their_largest_sums_do_not_overflow() {
    // Every code at its largest (15, 31 or 63; Q8_0's at −128), every scale and minimum at its
    // largest, activations all ±1 (codes ±127), one token and a pair: the 16-bit sums at their
    // limit. All regrouped (Q6_K too, whether this CPU's kernels would regroup it or not).
    let (rows, cols) = (8, 256);
    let cases: [(Format, u8, &[usize]); 7] = [
        (Format::Q4_0, 0xFF, &[0]),
        (Format::Q4_1, 0xFF, &[0, 2]),
        (Format::Q5_0, 0xFF, &[0]),
        (Format::Q5_1, 0xFF, &[0, 2]),
        (Format::Q8_0, 0x80, &[0]),
        (Format::Q4K, 0xFF, &[0, 2]),
        (Format::Q6K, 0xFF, &[208]),
    ];
    for (format, code, scales) in cases {
        let (values, size) = format.block();
        let mut bytes = vec![code; rows * cols / values * size];
        for block in bytes.chunks_exact_mut(size) {
            for &at in scales {
                block[at..at + 2].copy_from_slice(&f16::from_f32(0.01).to_le_bytes());
            }
            if format == Format::Q6K {
                // Signed scales: 127, the largest.
                block[192..208].fill(0x7F);
            }
        }
        let weights = Matrix::of_bytes(format, rows, cols, bytes).regrouped_with(true);
        for sign in [1.0f32, -1.0] {
            let mut xs = Activations::default();
            xs.quantize(&vec![sign; 2 * cols], cols);
            let expected = reference(&weights, xs.all().blocks);
            let mut out = vec![0.0; 2 * rows];
            multiply(&weights, 0..rows, xs.all(), &mut out);
            let mut first = vec![0.0; rows];
            multiply(&weights, 0..rows, xs.all().run(0..1), &mut first);
            assert_close(&first, &expected[..rows], 1e-4, &format!("{format:?}, one token"));
            assert_close(&out, &expected, 1e-4, &format!("{format:?}, sign {sign}"));
        }
    }
}

#[test]
fn a_stacked_matrix_regroups_only_its_parts_of_whole_groups() {
    // Three Q6_K rows (not regrouped), then sixteen Q4_K rows (regrouped) that start at row 3.
    let cols = 256;
    let stacked = Matrix::stack(vec![
        random_matrix(Format::Q6K, 3, cols, 21),
        random_matrix(Format::Q4K, 16, cols, 22),
    ]);
    let regrouped = stacked.clone().regrouped();
    let formats: Vec<Format> = regrouped.parts.iter().map(|part| part.format).collect();
    assert_eq!(formats, [Format::Q6K, Format::Q4KRows8]);
    let xs = activations(cols, 3, 23);
    for range in [0..19, 2..12] {
        let mut expected = vec![0.0; range.len() * 3];
        multiply(&stacked, range.clone(), xs.all(), &mut expected);
        let mut out = vec![0.0; range.len() * 3];
        multiply(&regrouped, range.clone(), xs.all(), &mut out);
        assert_close(&out, &expected, 1e-4, &format!("rows {range:?}"));
    }
}

/// The kernels' speed, one thread, by how many tokens go through a weight row together (run
/// by hand: `cargo test --release -p llmtool-local kernel_speed -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement, not a check"]
fn kernel_speed() {
    let rows: usize =
        std::env::var("KERNEL_ROWS").ok().and_then(|r| r.parse().ok()).unwrap_or(1536);
    for (format, _) in REGROUPED {
        // Super-blocks need widths of 256.
        let cols = if matches!(format, Format::Q4K | Format::Q6K) { 1536 } else { 576 };
        // As the model would multiply it (Q6_K regrouped only for the VNNI kernel).
        let weights = random_matrix(format, rows, cols, 5).regrouped();
        let format = weights.parts[0].format;
        for n in [1, 2, 4, 8, 16] {
            let xs = activations(cols, n, 9);
            let mut out = vec![0.0; rows * n];
            let rounds = (2000 * 1536 / rows / n).max(2);
            let started = std::time::Instant::now();
            for _ in 0..rounds {
                multiply(&weights, 0..rows, xs.all(), &mut out);
            }
            let seconds = started.elapsed().as_secs_f64();
            let values = (rows * cols * n * rounds) as f64;
            println!("{format:?} × {n:>2} tokens: {:6.1} Gvalues/s", values / seconds / 1e9);
        }
    }
}

/// As [`kernel_speed`], through the forward pass's product (rows split across the threads).
#[test]
#[ignore = "a measurement, not a check"]
fn threaded_product_speed() {
    let rows: usize =
        std::env::var("KERNEL_ROWS").ok().and_then(|r| r.parse().ok()).unwrap_or(3072);
    let cols = 576;
    let weights = random_matrix(Format::Q4_1, rows, cols, 5).regrouped();
    let pool = rayon::ThreadPoolBuilder::new().build().unwrap();
    for n in [1, 2, 4, 8, 16] {
        let activations = activations(cols, n, 9);
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        let rounds = (4000 * 1536 / rows / n).max(2);
        let started = std::time::Instant::now();
        pool.install(|| {
            for _ in 0..rounds {
                crate::llama::multiply(&weights, activations.all(), &mut out, &mut scratch);
            }
        });
        let seconds = started.elapsed().as_secs_f64();
        let values = (rows * cols * n * rounds) as f64;
        println!("threaded Q4_1 {rows} × {n:>2} tokens: {:6.1} Gvalues/s", values / seconds / 1e9);
    }
}

#[test]
fn activations_quantize_to_the_same_codes_in_simd_and_one_by_one() {
    // Values of every size, ties to round (x.5 after scaling), zeros, and a block all zero.
    let mut numbers = Numbers(3);
    let mut values: Vec<f32> = (0..32 * 40).map(|i| numbers.unit() * (1 + i % 7) as f32).collect();
    values[32..64].fill(0.0);
    for (i, v) in values[64..96].iter_mut().enumerate() {
        *v = (i as f32 - 15.5) * 127.0 / 16.0;
    }
    let mut ours = Vec::new();
    quantize_q8(&values, &mut ours);
    let theirs: Vec<BlockQ8> = values.chunks_exact(BLOCK).map(BlockQ8::quantize).collect();
    assert_eq!(ours.len(), theirs.len());
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(
            (a.d.to_bits(), a.sum.to_bits(), a.qs),
            (b.d.to_bits(), b.sum.to_bits(), b.qs),
            "block {i}"
        );
    }
}
