//! Choosing the next token: repetition penalties, a mask from the output constraint, then
//! greedy (temperature 0) or sampling with a seeded generator from the likely tokens only.
//!
//! Which tokens are likely is decided as llama.cpp decides it by default, and in its order:
//! the `top_k` most likely, of those the smallest set holding `top_p` of their probability,
//! of those the ones at least `min_p` times as likely as the likeliest; the temperature is
//! applied to the survivors last. Without the cuts, a small model at temperature 0.7 picks a
//! word from its long tail every few sentences and the answer wanders off ("Rayleigh
//! Scrubber scattering").

use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};

/// How to choose tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// 0 is greedy: always the most likely token, deterministic.
    pub temperature: f64,
    pub top_p: f64,
    /// 0 keeps every token.
    pub top_k: usize,
    /// 0 keeps every token.
    pub min_p: f64,
    /// Subtracted from a token's logit once per time it was generated.
    pub frequency_penalty: f32,
    /// Subtracted from a token's logit once if it was generated at all.
    pub presence_penalty: f32,
    pub seed: u64,
}

impl Default for Sampling {
    fn default() -> Self {
        Self {
            temperature: 0.7,
            top_p: 0.95,
            top_k: 40,
            min_p: 0.05,
            frequency_penalty: 0.0,
            presence_penalty: 0.0,
            seed: 299_792_458,
        }
    }
}

/// Picks tokens with [`Sampling`], remembering what it picked for the penalties.
#[derive(Debug)]
pub struct Sampler {
    sampling: Sampling,
    rng: StdRng,
    counts: Vec<u32>,
}

impl Sampler {
    pub fn new(sampling: Sampling, vocab_size: usize) -> Self {
        Self { sampling, rng: StdRng::seed_from_u64(sampling.seed), counts: vec![0; vocab_size] }
    }

    /// The next token from `logits`; `allowed` (when given) says which tokens the constraint
    /// permits. Returns `None` when nothing is allowed.
    pub fn pick(&mut self, logits: &mut [f32], allowed: Option<&[bool]>) -> Option<u32> {
        let Sampling { frequency_penalty, presence_penalty, .. } = self.sampling;
        if frequency_penalty != 0.0 || presence_penalty != 0.0 {
            for (logit, &count) in logits.iter_mut().zip(&self.counts) {
                if count > 0 {
                    *logit -= frequency_penalty * count as f32 + presence_penalty;
                }
            }
        }
        if let Some(allowed) = allowed {
            for (logit, &ok) in logits.iter_mut().zip(allowed) {
                if !ok {
                    *logit = f32::NEG_INFINITY;
                }
            }
        }
        let token =
            if self.sampling.temperature <= 0.0 { argmax(logits) } else { self.sample(logits) }?;
        if let Some(count) = self.counts.get_mut(token as usize) {
            *count += 1;
        }
        Some(token)
    }

    fn sample(&mut self, logits: &[f32]) -> Option<u32> {
        let Sampling { top_k, top_p, min_p, .. } = self.sampling;
        let mut likely: Vec<(u32, f32)> = logits
            .iter()
            .enumerate()
            .filter(|(_, l)| l.is_finite())
            .map(|(i, &l)| (i as u32, l))
            .collect();
        let by_logit = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1);
        if top_k > 0 && likely.len() > top_k {
            // The k likeliest without sorting the whole vocabulary (150,000 tokens for Qwen).
            likely.select_nth_unstable_by(top_k - 1, by_logit);
            likely.truncate(top_k);
        }
        likely.sort_unstable_by(by_logit);
        let &(_, max) = likely.first()?;
        // Probabilities at temperature 1, among the tokens still in the running.
        let odds: Vec<f32> = likely.iter().map(|(_, l)| (l - max).exp()).collect();
        let total: f32 = odds.iter().sum();
        let mut kept = 0.0f32;
        let in_nucleus = odds
            .iter()
            .position(|odd| {
                kept += odd / total;
                f64::from(kept) >= top_p
            })
            .map_or(odds.len(), |i| i + 1);
        let likely_enough = odds.iter().take_while(|&&odd| f64::from(odd) >= min_p).count();
        likely.truncate(in_nucleus.min(likely_enough).max(1));
        let temperature = self.sampling.temperature as f32;
        let weights: Vec<(u32, f32)> =
            likely.iter().map(|&(token, l)| (token, ((l - max) / temperature).exp())).collect();
        let total: f32 = weights.iter().map(|(_, w)| w).sum();
        let mut target = self.rng.random::<f32>() * total;
        for (token, weight) in &weights {
            if target < *weight {
                return Some(*token);
            }
            target -= weight;
        }
        weights.last().map(|(token, _)| *token)
    }
}

fn argmax(logits: &[f32]) -> Option<u32> {
    let (index, value) = logits.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
    value.is_finite().then_some(index as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_is_argmax_and_masks_apply() {
        let mut sampler = Sampler::new(Sampling { temperature: 0.0, ..Sampling::default() }, 3);
        assert_eq!(sampler.pick(&mut [0.1, 2.0, 1.0], None), Some(1));
        assert_eq!(sampler.pick(&mut [0.1, 2.0, 1.0], Some(&[true, false, true])), Some(2));
        assert_eq!(sampler.pick(&mut [0.1, 2.0, 1.0], Some(&[false, false, false])), None);
    }

    #[test]
    fn seeded_sampling_repeats_and_penalties_bite() {
        let sampling = Sampling { temperature: 1.0, seed: 7, ..Sampling::default() };
        let draw = || {
            let mut sampler = Sampler::new(sampling, 4);
            (0..20)
                .map(|_| sampler.pick(&mut [1.0, 1.0, 1.0, 1.0], None).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(), draw());
        let mut penalized = Sampler::new(
            Sampling { temperature: 0.0, presence_penalty: 5.0, ..Sampling::default() },
            2,
        );
        assert_eq!(penalized.pick(&mut [1.0, 0.5], None), Some(0));
        assert_eq!(
            penalized.pick(&mut [1.0, 0.5], None),
            Some(1),
            "the repeated token is penalized"
        );
    }

    #[test]
    fn top_k_and_min_p_cut_the_tail() {
        // Eight tokens of equal odds and one far likelier: top-k 2 keeps two; min-p keeps the
        // likeliest alone when the rest are under a twentieth of it.
        let draws = |logits: [f32; 9], sampling: Sampling| {
            let mut sampler = Sampler::new(sampling, logits.len());
            (0..200).map(|_| sampler.pick(&mut logits.clone(), None).unwrap()).collect::<Vec<_>>()
        };
        let one_likely = [3.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let plain = Sampling {
            temperature: 1.0,
            top_p: 1.0,
            top_k: 0,
            min_p: 0.0,
            seed: 3,
            ..Sampling::default()
        };
        assert!(draws(one_likely, plain).iter().any(|&t| t > 1), "with no cut the tail is drawn");
        let top_two: std::collections::BTreeSet<u32> =
            draws(one_likely, Sampling { top_k: 2, ..plain }).into_iter().collect();
        assert!(top_two.len() == 2 && top_two.contains(&0), "{top_two:?}");
        let far_likelier = [4.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        assert!(draws(far_likelier, Sampling { min_p: 0.05, ..plain }).iter().all(|&t| t == 0));
        assert_eq!(Sampling::default().top_k, 40, "llama.cpp's defaults");
    }

    #[test]
    fn top_p_keeps_only_the_nucleus() {
        let mut sampler = Sampler::new(
            Sampling { temperature: 1.0, top_p: 0.5, seed: 1, ..Sampling::default() },
            3,
        );
        for _ in 0..50 {
            assert_eq!(sampler.pick(&mut [5.0, 0.0, 0.0], None), Some(0));
        }
    }
}
