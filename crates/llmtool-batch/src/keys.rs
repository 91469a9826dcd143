//! Row keys: what a row's work is (the tool, the rendered prompt, the model and parameters),
//! and which occurrence of that work it is in the dataset, so that two identical rows are two
//! rows, and a row keeps its key wherever it moves.

use std::collections::{HashMap, HashSet};

use sha2::{Digest as _, Sha256};

/// The work's hash: SHA-256 of the tool's hash, the rendered prompt and the parameters (each
/// preceded by its length, so that parts cannot run into each other).
pub fn work_hash(tool_hash: &str, prompt: &str, parameters: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in [tool_hash, prompt, parameters] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().into()
}

/// Numbers the rows of one work in the order they are met: the first is 1, the next identical
/// row 2, and so on. The key of the first is the work's hash in hex; a later one adds `/N`.
///
/// Only an 8-byte fingerprint of each work is kept (9 to 18 bytes a row in the hash table,
/// the one thing a batch keeps per row). Two different works with one fingerprint (odds of about
/// 3 in 100 million at a million rows) share a count; that changes only which of them is `/2`,
/// and only matters if the dataset is also reordered between runs.
#[derive(Debug, Default)]
pub struct Occurrences {
    seen: HashSet<u64>,
    repeated: HashMap<u64, u32>,
}

impl Occurrences {
    /// The key of the next row of `work`.
    pub fn key(&mut self, work: &[u8; 32]) -> String {
        let mut fingerprint = [0u8; 8];
        fingerprint.copy_from_slice(&work[..8]);
        let fingerprint = u64::from_le_bytes(fingerprint);
        let hex = hex::encode(work);
        if self.seen.insert(fingerprint) {
            return hex;
        }
        let count = self.repeated.entry(fingerprint).or_insert(1);
        *count += 1;
        format!("{hex}/{count}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_rows_get_numbered_keys_and_parts_never_run_together() {
        let mut occurrences = Occurrences::default();
        let a = work_hash("h", "p", "{}");
        let b = work_hash("h", "p2", "{}");
        let first = occurrences.key(&a);
        assert_eq!(first.len(), 64);
        assert_eq!(occurrences.key(&b), hex::encode(b));
        assert_eq!(occurrences.key(&a), format!("{first}/2"));
        assert_eq!(occurrences.key(&a), format!("{first}/3"));
        assert_ne!(work_hash("ab", "c", ""), work_hash("a", "bc", ""));
    }
}
