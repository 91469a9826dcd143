//! Per-caller rate limits: a token bucket per token (or per client address for requests
//! without one), refilled continuously, with a bounded number of buckets. One server keeps
//! them in memory; the servers of a PostgreSQL library keep them in its database
//! ([`RateLimiter::shared_through`]), so that a caller's limit is one whichever server
//! answers (should the database not answer, a server goes on with its own buckets).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use llmtool_registry::{Bucket, Spend, Store};

/// The most callers tracked at once; past it, the buckets idle longest are dropped.
const MAX_BUCKETS: usize = 10_000;

/// Requests per minute for each caller, with bursts up to the same number.
pub struct RateLimiter {
    per_minute: u32,
    buckets: Mutex<HashMap<String, Held>>,
    /// The library whose database keeps the buckets, when several servers share it.
    shared: Option<Arc<dyn Store>>,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter")
            .field("per_minute", &self.per_minute)
            .field("shared", &self.shared.is_some())
            .finish_non_exhaustive()
    }
}

/// A bucket kept in memory.
#[derive(Debug, Clone, Copy)]
struct Held {
    tokens: f64,
    seen: Instant,
}

impl RateLimiter {
    /// `per_minute` requests a minute for each caller; 0 means no limit.
    pub fn new(per_minute: u32) -> RateLimiter {
        RateLimiter { per_minute, buckets: Mutex::new(HashMap::new()), shared: None }
    }

    /// Keeps the buckets in `store`'s database, shared with every server of the library, if
    /// several servers may share it; and forgets idle buckets there from time to time.
    #[must_use]
    pub fn shared_through(mut self, store: &Arc<dyn Store>) -> RateLimiter {
        if store.shared_by_servers() && self.per_minute > 0 {
            self.shared = Some(Arc::clone(store));
            let store = Arc::downgrade(store);
            tokio::spawn(async move {
                let mut every = tokio::time::interval(Duration::from_mins(1));
                loop {
                    every.tick().await;
                    let Some(store) = store.upgrade() else { break };
                    if let Err(error) = store.forget_idle_rates(Duration::from_mins(10)).await {
                        tracing::warn!("the idle rate-limit buckets are not forgotten: {error}");
                    }
                }
            });
        }
        self
    }

    /// The bucket's size and refill rate.
    fn bucket(&self) -> Bucket {
        let capacity = f64::from(self.per_minute);
        Bucket { capacity, per_second: capacity / 60.0 }
    }

    /// Spends `spend` from `caller`'s bucket in the database: how full it was, and whether the
    /// spend was made; `None` when the buckets are this server's (or the database failed).
    async fn spend_shared(&self, caller: &str, spend: Spend) -> Option<llmtool_registry::Taken> {
        let store = self.shared.as_ref()?;
        match store.spend_rate(caller, self.bucket(), spend).await {
            Ok(taken) => Some(taken),
            Err(error) => {
                tracing::warn!(
                    "the shared rate limit is not reached; this server's own holds: {error}"
                );
                None
            }
        }
    }

    /// How long an empty bucket that held `before` waits for one request.
    fn wait_from(&self, before: f64) -> Duration {
        Duration::from_secs_f64(((1.0 - before) / self.bucket().per_second).max(0.0))
    }

    /// Takes one request from `caller`'s bucket: `Err` with how long to wait when it is empty.
    pub async fn take(&self, caller: &str) -> Result<(), Duration> {
        if self.per_minute == 0 {
            return Ok(());
        }
        if let Some(taken) = self.spend_shared(caller, Spend::One).await {
            return if taken.granted { Ok(()) } else { Err(self.wait_from(taken.before)) };
        }
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
    pub async fn charge(&self, caller: &str, cost: f64) {
        if self.per_minute == 0 || cost <= 0.0 {
            return;
        }
        if self.spend_shared(caller, Spend::Charge(cost)).await.is_some() {
            return;
        }
        let _ = self.with_bucket(caller, |bucket, capacity, _| {
            bucket.tokens -= cost.clamp(0.0, capacity);
        });
    }

    /// How long `caller` must wait for one request, if it must, without taking anything.
    pub async fn wait(&self, caller: &str) -> Option<Duration> {
        if self.per_minute == 0 {
            return None;
        }
        if let Some(taken) = self.spend_shared(caller, Spend::Look).await {
            return (taken.before < 1.0).then(|| self.wait_from(taken.before));
        }
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
        act: impl FnOnce(&mut Held, f64, f64) -> T,
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
            buckets.entry(caller.to_owned()).or_insert(Held { tokens: capacity, seen: now });
        let refilled = now.duration_since(bucket.seen).as_secs_f64() * per_second;
        bucket.tokens = (bucket.tokens + refilled).min(capacity);
        bucket.seen = now;
        Some(act(bucket, capacity, per_second))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_caller_gets_its_burst_then_waits_and_others_are_apart() {
        let limiter = RateLimiter::new(3);
        for _ in 0..3 {
            assert!(limiter.take("ci").await.is_ok());
        }
        let wait = limiter.take("ci").await.unwrap_err();
        assert!(wait > Duration::from_secs(15) && wait <= Duration::from_secs(20), "{wait:?}");
        assert!(limiter.take("ana").await.is_ok(), "each caller has a bucket of its own");
        let unlimited = RateLimiter::new(0);
        for _ in 0..1000 {
            assert!(unlimited.take("ci").await.is_ok());
        }
    }

    #[tokio::test]
    async fn costly_requests_count_as_several_and_a_debt_is_waited_off() {
        let limiter = RateLimiter::new(60);
        limiter.charge("ci", 50.0).await;
        assert_eq!(limiter.wait("ci").await, None, "10 left");
        limiter.charge("ci", 30.0).await;
        let wait = limiter.wait("ci").await.unwrap();
        assert!(wait > Duration::from_secs(20) && wait <= Duration::from_secs(21), "{wait:?}");
        assert!(limiter.take("ci").await.is_err());
        // At most a bucket at a time: from full to empty, a second's wait at one a second.
        limiter.charge("ana", 1e9).await;
        let wait = limiter.wait("ana").await.unwrap();
        assert!(wait > Duration::from_millis(900) && wait <= Duration::from_secs(1), "{wait:?}");
    }

    #[tokio::test]
    async fn the_buckets_stay_bounded() {
        let limiter = RateLimiter::new(10);
        for caller in 0..(MAX_BUCKETS * 2) {
            let _ = limiter.take(&caller.to_string()).await;
        }
        assert!(limiter.buckets.lock().unwrap().len() <= MAX_BUCKETS);
    }
}
