//! Pacing requests to each provider: at most as many at once as the provider bears, found by
//! trying (the limit halves on a 429 and grows back by one a round of successes, and a
//! `Retry-After` holds every request back), and, when the config gives them, requests and
//! tokens per minute.
//!
//! The rate limits use `governor`. The adaptive limit is written here: it is the additive
//! increase, multiplicative decrease of TCP's congestion control, and the crates that offer
//! one are tied to tower services, not to a loop of requests like this one.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::sync::Notify;
use tokio::time::Instant;

/// A provider's limits from the config; all optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Requests at once, at most (the adaptive limit never grows past it).
    pub concurrency: Option<NonZeroU32>,
    pub requests_per_minute: Option<NonZeroU32>,
    /// Tokens per minute, counting each request's prompt (estimated) and its output limit.
    pub tokens_per_minute: Option<NonZeroU32>,
}

impl Limits {
    /// The limits the config file gives each provider, by provider name.
    pub fn by_provider(config: &llmtool_config::Config) -> HashMap<String, Self> {
        config
            .providers
            .iter()
            .map(|(name, provider)| {
                let limits = Self {
                    concurrency: provider.max_concurrency,
                    requests_per_minute: provider.requests_per_minute,
                    tokens_per_minute: provider.tokens_per_minute,
                };
                (name.clone(), limits)
            })
            .collect()
    }
}

/// The wait after a 429 that names none.
const DEFAULT_PAUSE: Duration = Duration::from_secs(1);

/// The shortest and longest pause a 429 causes, whatever its `Retry-After` says.
const MIN_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_mins(5);

/// The paces of all providers, by provider name. Cheap to share.
#[derive(Debug, Default)]
pub struct Pacer {
    limits: HashMap<String, Limits>,
    /// The most requests at once to any provider, when the caller sets one (`batch -j`).
    concurrency: Option<NonZeroU32>,
    paces: Mutex<HashMap<String, Arc<Pace>>>,
}

impl Pacer {
    pub fn new(limits: HashMap<String, Limits>, concurrency: Option<NonZeroU32>) -> Self {
        Self { limits, concurrency, paces: Mutex::default() }
    }

    /// Waits until a request to `provider` of about `tokens` tokens may go, and holds its
    /// place until the [`Permit`] is settled or dropped.
    pub async fn acquire(&self, provider: &str, tokens: u64) -> Permit {
        let pace = self.pace(provider);
        let epoch = pace.enter().await;
        // The place is held from here: dropped while waiting on a rate, it is given back.
        let permit = Permit { pace: Arc::clone(&pace), epoch, settled: false };
        if let Some(requests) = &pace.requests {
            requests.until_ready().await;
        }
        if let Some((limiter, burst)) = &pace.tokens {
            let tokens = u32::try_from(tokens).unwrap_or(u32::MAX).clamp(1, burst.get());
            let tokens = NonZeroU32::new(tokens).unwrap_or(NonZeroU32::MIN);
            // Never more than the burst, so this cannot fail; a larger request waits for a
            // full bucket and takes it all.
            let _ = limiter.until_n_ready(tokens).await;
        }
        permit
    }

    /// The concurrency limit of `provider` now (`None`: no limit yet).
    pub fn limit(&self, provider: &str) -> Option<f64> {
        let limit = self.pace(provider).lock().limit;
        limit.is_finite().then_some(limit)
    }

    fn pace(&self, provider: &str) -> Arc<Pace> {
        let mut paces = self.paces.lock().unwrap_or_else(PoisonError::into_inner);
        let pace = paces.entry(provider.to_owned()).or_insert_with(|| {
            let limits = self.limits.get(provider).copied().unwrap_or_default();
            Arc::new(Pace::new(limits, self.concurrency))
        });
        Arc::clone(pace)
    }
}

/// One provider's pace.
#[derive(Debug)]
struct Pace {
    state: Mutex<State>,
    /// Wakes a request waiting for room.
    room: Notify,
    /// The most the limit grows to.
    ceiling: f64,
    requests: Option<DefaultDirectRateLimiter>,
    tokens: Option<(DefaultDirectRateLimiter, NonZeroU32)>,
}

#[derive(Debug)]
struct State {
    /// Requests at once; infinite until the first 429 (or the ceiling).
    limit: f64,
    in_flight: u32,
    /// No request starts before then (a 429's `Retry-After`).
    paused_until: Option<Instant>,
    /// Moves on at each decrease: a 429 to a request sent before the last decrease was
    /// already counted in it, so it does not halve the limit again.
    epoch: u64,
}

impl Pace {
    fn new(limits: Limits, concurrency: Option<NonZeroU32>) -> Self {
        let ceiling = [limits.concurrency, concurrency]
            .into_iter()
            .flatten()
            .map(|n| f64::from(n.get()))
            .fold(f64::INFINITY, f64::min);
        Self {
            state: Mutex::new(State { limit: ceiling, in_flight: 0, paused_until: None, epoch: 0 }),
            room: Notify::new(),
            ceiling,
            requests: limits.requests_per_minute.map(|n| RateLimiter::direct(per_minute(n))),
            tokens: limits.tokens_per_minute.map(|n| {
                let quota = per_minute(n);
                (RateLimiter::direct(quota), quota.burst_size())
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for room under the limit and past any pause; the epoch it entered in.
    async fn enter(&self) -> u64 {
        loop {
            let notified = self.room.notified();
            let pause = {
                let mut state = self.lock();
                match state.paused_until {
                    Some(until) if until > Instant::now() => Some(until),
                    _ if f64::from(state.in_flight) < state.limit.floor().max(1.0) => {
                        state.in_flight += 1;
                        return state.epoch;
                    }
                    _ => None,
                }
            };
            match pause {
                Some(until) => tokio::time::sleep_until(until).await,
                None => notified.await,
            }
        }
    }

    fn leave(&self, epoch: u64, outcome: Outcome) {
        let mut state = self.lock();
        match outcome {
            Outcome::Success => {
                // One more a round: a round is `limit` successes while the limit is in use.
                if f64::from(state.in_flight) + 1.0 >= state.limit.floor() {
                    state.limit = (state.limit + 1.0 / state.limit).min(self.ceiling);
                }
            }
            Outcome::RateLimited(retry_after) => {
                if epoch == state.epoch {
                    state.limit = (state.limit.min(f64::from(state.in_flight)) / 2.0).max(1.0);
                    state.epoch += 1;
                }
                let pause = retry_after.unwrap_or(DEFAULT_PAUSE).clamp(MIN_PAUSE, MAX_PAUSE);
                let until = Instant::now() + pause;
                state.paused_until = Some(state.paused_until.map_or(until, |now| now.max(until)));
            }
            Outcome::Other => {}
        }
        state.in_flight = state.in_flight.saturating_sub(1);
        drop(state);
        self.room.notify_waiters();
    }
}

/// `n` a minute, with a burst of ten seconds' worth (at least one): providers enforce their
/// minute limits over shorter windows too.
fn per_minute(n: NonZeroU32) -> Quota {
    let burst = NonZeroU32::new(n.get() / 6).unwrap_or(NonZeroU32::MIN);
    Quota::per_minute(n).allow_burst(burst)
}

/// How a request ended, for its provider's pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// A 429, with the wait it asked for.
    RateLimited(Option<Duration>),
    /// Any other failure: it says nothing of the rate.
    Other,
}

/// A request's place under its provider's limit.
#[derive(Debug)]
pub struct Permit {
    pace: Arc<Pace>,
    epoch: u64,
    settled: bool,
}

impl Permit {
    /// Gives the place back, telling the pace how the request ended.
    pub fn settle(mut self, outcome: Outcome) {
        self.settled = true;
        self.pace.leave(self.epoch, outcome);
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if !self.settled {
            self.pace.leave(self.epoch, Outcome::Other);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_limit_halves_on_a_429_waits_as_asked_and_grows_back_slowly() {
        let pacer = Pacer::new(HashMap::new(), NonZeroU32::new(16));
        assert_eq!(pacer.limit("p"), Some(16.0));
        let permits: Vec<Permit> =
            futures_util::future::join_all((0..16).map(|_| pacer.acquire("p", 10))).await;
        let mut permits = permits.into_iter();
        let first = permits.next().unwrap_or_else(|| unreachable!());
        first.settle(Outcome::RateLimited(Some(Duration::from_secs(5))));
        assert_eq!(pacer.limit("p"), Some(8.0), "half of the 16 in flight");
        // Others sent before the decrease do not halve it again.
        let second = permits.next().unwrap_or_else(|| unreachable!());
        second.settle(Outcome::RateLimited(None));
        assert_eq!(pacer.limit("p"), Some(8.0));
        drop(permits);
        // The pause holds the next request back for the 5 seconds asked.
        let started = Instant::now();
        let next = pacer.acquire("p", 10).await;
        assert!(started.elapsed() >= Duration::from_secs(5), "{:?}", started.elapsed());
        next.settle(Outcome::Success);
        // Successes while the limit is in use add to it, a little each (one a full round);
        // here the round is not refilled, so only the first ones count.
        let round: Vec<Permit> =
            futures_util::future::join_all((0..8).map(|_| pacer.acquire("p", 10))).await;
        for permit in round {
            permit.settle(Outcome::Success);
        }
        let grown = pacer.limit("p").unwrap_or_default();
        assert!(grown > 8.2 && grown < 9.0, "{grown}");
    }

    #[tokio::test(start_paused = true)]
    async fn no_more_than_the_limit_at_once() {
        let pacer = Arc::new(Pacer::new(HashMap::new(), NonZeroU32::new(2)));
        let a = pacer.acquire("p", 1).await;
        let _b = pacer.acquire("p", 1).await;
        let waiting = tokio::spawn({
            let pacer = Arc::clone(&pacer);
            async move { pacer.acquire("p", 1).await }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!waiting.is_finished(), "a third waits for room");
        a.settle(Outcome::Success);
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .unwrap_or_else(|_| panic!("room was made"))
            .unwrap_or_else(|e| panic!("{e}"))
            .settle(Outcome::Success);
        assert!(pacer.acquire("q", 1).await.epoch == 0, "providers are paced apart");
    }

    #[tokio::test]
    async fn requests_and_tokens_a_minute_from_the_config() {
        let limits = Limits { requests_per_minute: NonZeroU32::new(60), ..Limits::default() };
        let pacer = Pacer::new(HashMap::from([("p".to_owned(), limits)]), None);
        // A burst of ten seconds' worth of requests goes at once; the eleventh waits a second.
        let started = std::time::Instant::now();
        for _ in 0..10 {
            pacer.acquire("p", 1).await.settle(Outcome::Success);
        }
        assert!(started.elapsed() < Duration::from_millis(500), "{:?}", started.elapsed());
        pacer.acquire("p", 1).await.settle(Outcome::Success);
        assert!(started.elapsed() >= Duration::from_millis(900), "{:?}", started.elapsed());
        // Tokens: 100 a second, 1,000 in the bucket. After a request of 600, the next waits
        // two seconds for the 200 it lacks.
        let tokens = Limits { tokens_per_minute: NonZeroU32::new(6000), ..Limits::default() };
        let pacer = Pacer::new(HashMap::from([("q".to_owned(), tokens)]), None);
        let started = std::time::Instant::now();
        pacer.acquire("q", 600).await.settle(Outcome::Success);
        pacer.acquire("q", 600).await.settle(Outcome::Success);
        assert!(started.elapsed() >= Duration::from_millis(1800), "{:?}", started.elapsed());
    }
}
