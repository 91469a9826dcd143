//! Per-caller rate limits: a token bucket per token (or per client address for requests
//! without one), refilled continuously, with a bounded number of buckets.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most callers tracked at once; past it, the buckets idle longest are dropped.
const MAX_BUCKETS: usize = 10_000;

/// Requests per minute for each caller, with bursts up to the same number.
#[derive(Debug)]
pub struct RateLimiter {
    per_minute: u32,
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    seen: Instant,
}

impl RateLimiter {
    /// `per_minute` requests a minute for each caller; 0 means no limit.
    pub fn new(per_minute: u32) -> RateLimiter {
        RateLimiter { per_minute, buckets: Mutex::new(HashMap::new()) }
    }

    /// Takes one request from `caller`'s bucket: `Err` with how long to wait when it is empty.
    pub fn take(&self, caller: &str) -> Result<(), Duration> {
        self.with_bucket(caller, |bucket, _, per_second| {
            if bucket.tokens >= 1.0 {
                bucket.tokens -= 1.0;
                Ok(())
            } else {
                Err(Duration::from_secs_f64((1.0 - bucket.tokens) / per_second))
            }
        })
        .unwrap_or(Ok(()))
    }

    /// Spends `cost` more requests' worth of `caller`'s bucket, for a request that costs more
    /// than one (a large body, long work): the bucket may go below empty, a debt the caller
    /// waits off before its next request. At most a bucket's worth at a time.
    pub fn charge(&self, caller: &str, cost: f64) {
        let _ = self.with_bucket(caller, |bucket, capacity, _| {
            bucket.tokens -= cost.clamp(0.0, capacity);
        });
    }

    /// How long `caller` must wait for one request, if it must, without taking anything.
    pub fn wait(&self, caller: &str) -> Option<Duration> {
        self.with_bucket(caller, |bucket, _, per_second| {
            (bucket.tokens < 1.0)
                .then(|| Duration::from_secs_f64((1.0 - bucket.tokens) / per_second))
        })
        .flatten()
    }

    /// Runs `act` on `caller`'s bucket, refilled to now, with the bucket's size and refill
    /// rate; `None` when there is no limit.
    fn with_bucket<T>(
        &self,
        caller: &str,
        act: impl FnOnce(&mut Bucket, f64, f64) -> T,
    ) -> Option<T> {
        if self.per_minute == 0 {
            return None;
        }
        let capacity = f64::from(self.per_minute);
        let per_second = capacity / 60.0;
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(caller) {
            // Forget the half of the callers idle longest (a full bucket is what a forgotten
            // caller gets back, so only idle ones are dropped).
            let mut seen: Vec<Instant> = buckets.values().map(|b| b.seen).collect();
            seen.sort_unstable();
            let cutoff = seen[seen.len() / 2];
            buckets.retain(|_, bucket| bucket.seen > cutoff);
        }
        let bucket =
            buckets.entry(caller.to_owned()).or_insert(Bucket { tokens: capacity, seen: now });
        let refilled = now.duration_since(bucket.seen).as_secs_f64() * per_second;
        bucket.tokens = (bucket.tokens + refilled).min(capacity);
        bucket.seen = now;
        Some(act(bucket, capacity, per_second))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_gets_its_burst_then_waits_and_others_are_apart() {
        let limiter = RateLimiter::new(3);
        for _ in 0..3 {
            assert!(limiter.take("ci").is_ok());
        }
        let wait = limiter.take("ci").unwrap_err();
        assert!(wait > Duration::from_secs(15) && wait <= Duration::from_secs(20), "{wait:?}");
        assert!(limiter.take("ana").is_ok(), "each caller has a bucket of its own");
        let unlimited = RateLimiter::new(0);
        assert!((0..1000).all(|_| unlimited.take("ci").is_ok()));
    }

    #[test]
    fn costly_requests_count_as_several_and_a_debt_is_waited_off() {
        let limiter = RateLimiter::new(60);
        limiter.charge("ci", 50.0);
        assert_eq!(limiter.wait("ci"), None, "10 left");
        limiter.charge("ci", 30.0);
        let wait = limiter.wait("ci").unwrap();
        assert!(wait > Duration::from_secs(20) && wait <= Duration::from_secs(21), "{wait:?}");
        assert!(limiter.take("ci").is_err());
        // At most a bucket at a time: from full to empty, a second's wait at one a second.
        limiter.charge("ana", 1e9);
        let wait = limiter.wait("ana").unwrap();
        assert!(wait > Duration::from_millis(900) && wait <= Duration::from_secs(1), "{wait:?}");
    }

    #[test]
    fn the_buckets_stay_bounded() {
        let limiter = RateLimiter::new(10);
        for caller in 0..(MAX_BUCKETS * 2) {
            let _ = limiter.take(&caller.to_string());
        }
        assert!(limiter.buckets.lock().unwrap().len() <= MAX_BUCKETS);
    }
}
