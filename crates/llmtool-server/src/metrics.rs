//! What `/metrics` shows Prometheus: requests by route and status with their latency, runs by
//! provider, model, tool and outcome with their tokens, cost and time to the first token,
//! rate-limit refusals, data-loss prevention's findings by kind (never a value), the read
//! cache, the runs under way and waiting, MCP sessions, the database's connections, and the
//! process's CPU, memory and file handles. The registry is this server's own (no global
//! state), in Prometheus' text format 0.0.4.
//!
//! Every label takes its values from a bounded set: routes are the router's templates
//! (`/api/v1/tools/{slug}`, never a path a client typed), methods the standard ones, tools the
//! library's slugs, models the ones the operator configured (a server runs no other).

use std::time::Duration;

use prometheus::{
    CounterVec, Encoder as _, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

/// The latency buckets of HTTP requests, in seconds: half a millisecond to about 8 seconds.
const REQUEST_BUCKETS: [f64; 15] = [
    0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048,
    4.096, 8.192,
];

/// The buckets of a run's time to first token and whole time: 50 ms to about 100 seconds.
const RUN_BUCKETS: [f64; 12] = [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4];

/// The server's metrics.
pub(crate) struct Metrics {
    /// Whether anything is counted (`serve --no-metrics` turns it off).
    pub(crate) on: bool,
    registry: Registry,
    /// The process's own metrics, without the `llmtool_` prefix.
    process: Registry,
    requests: IntCounterVec,
    request_seconds: HistogramVec,
    runs: IntCounterVec,
    run_tokens: IntCounterVec,
    run_cost: CounterVec,
    run_seconds: HistogramVec,
    first_token_seconds: HistogramVec,
    rate_limited: IntCounter,
    dlp_findings: IntCounterVec,
    cache: IntCounterVec,
    runs_active: IntGauge,
    runs_waiting: IntGauge,
    mcp_sessions: IntGauge,
    studio_sessions: IntGauge,
    db_connections: IntGaugeVec,
    db_max_connections: IntGauge,
}

/// What a scrape reads off the server at that moment.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Now {
    pub(crate) runs_active: usize,
    pub(crate) runs_waiting: usize,
    pub(crate) mcp_sessions: usize,
    /// Open studio sessions, when the database said.
    pub(crate) studio_sessions: Option<u64>,
    pub(crate) pool: Option<llmtool_registry::PoolUse>,
}

/// How a run ended, as the run log says, with what it used.
pub(crate) struct RunSeen<'a> {
    pub(crate) provider: &'a str,
    pub(crate) model: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) outcome: &'a str,
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    pub(crate) cost_usd: f64,
    pub(crate) duration: Option<Duration>,
    pub(crate) first_token: Option<Duration>,
    /// Values data-loss prevention found, by kind.
    pub(crate) findings: &'a std::collections::BTreeMap<String, u64>,
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let registry = Registry::new_custom(Some("llmtool".to_owned()), None)
            .expect("a fixed namespace is valid");
        let metrics = Metrics {
            requests: IntCounterVec::new(
                Opts::new("http_requests_total", "HTTP requests answered, by route and status"),
                &["route", "method", "status"],
            )
            .expect("valid metric"),
            request_seconds: HistogramVec::new(
                HistogramOpts::new(
                    "http_request_duration_seconds",
                    "Time to answer an HTTP request (to the first byte of a stream)",
                )
                .buckets(REQUEST_BUCKETS.to_vec()),
                &["route", "method"],
            )
            .expect("valid metric"),
            runs: IntCounterVec::new(
                Opts::new("runs_total", "Tool runs kept, by provider, model, tool and outcome"),
                &["provider", "model", "tool", "outcome"],
            )
            .expect("valid metric"),
            run_tokens: IntCounterVec::new(
                Opts::new("run_tokens_total", "Tokens the runs used, by direction"),
                &["provider", "model", "direction"],
            )
            .expect("valid metric"),
            run_cost: CounterVec::new(
                Opts::new("run_cost_usd_total", "What the runs cost, in US dollars"),
                &["provider", "model"],
            )
            .expect("valid metric"),
            run_seconds: HistogramVec::new(
                HistogramOpts::new("run_duration_seconds", "A run's whole time")
                    .buckets(RUN_BUCKETS.to_vec()),
                &["provider", "model"],
            )
            .expect("valid metric"),
            first_token_seconds: HistogramVec::new(
                HistogramOpts::new(
                    "run_time_to_first_token_seconds",
                    "Time from a run's start to the first token of its answer",
                )
                .buckets(RUN_BUCKETS.to_vec()),
                &["provider", "model"],
            )
            .expect("valid metric"),
            rate_limited: IntCounter::new(
                "rate_limited_total",
                "Requests refused by the rate limit (429)",
            )
            .expect("valid metric"),
            dlp_findings: IntCounterVec::new(
                Opts::new(
                    "dlp_findings_total",
                    "Sensitive values data-loss prevention found in runs, by kind",
                ),
                &["kind"],
            )
            .expect("valid metric"),
            cache: IntCounterVec::new(
                Opts::new("read_cache_requests_total", "Reads answered from the read cache or not"),
                &["result"],
            )
            .expect("valid metric"),
            runs_active: IntGauge::new("runs_active", "Runs under way").expect("valid metric"),
            runs_waiting: IntGauge::new("runs_waiting", "Runs waiting for a turn")
                .expect("valid metric"),
            mcp_sessions: IntGauge::new("mcp_sessions", "Open MCP sessions").expect("valid metric"),
            studio_sessions: IntGauge::new(
                "studio_sessions",
                "Open studio sessions (signed in, not expired), on every server of the library",
            )
            .expect("valid metric"),
            db_connections: IntGaugeVec::new(
                Opts::new("db_connections", "The database pool's connections, by state"),
                &["state"],
            )
            .expect("valid metric"),
            db_max_connections: IntGauge::new(
                "db_max_connections",
                "The most connections the database pool opens",
            )
            .expect("valid metric"),
            registry,
            process: Registry::new(),
            on: true,
        };
        metrics.register_all();
        metrics
    }

    fn register_all(&self) {
        let collectors: [Box<dyn prometheus::core::Collector>; 16] = [
            Box::new(self.requests.clone()),
            Box::new(self.request_seconds.clone()),
            Box::new(self.runs.clone()),
            Box::new(self.run_tokens.clone()),
            Box::new(self.run_cost.clone()),
            Box::new(self.run_seconds.clone()),
            Box::new(self.first_token_seconds.clone()),
            Box::new(self.rate_limited.clone()),
            Box::new(self.dlp_findings.clone()),
            Box::new(self.cache.clone()),
            Box::new(self.runs_active.clone()),
            Box::new(self.runs_waiting.clone()),
            Box::new(self.mcp_sessions.clone()),
            Box::new(self.studio_sessions.clone()),
            Box::new(self.db_connections.clone()),
            Box::new(self.db_max_connections.clone()),
        ];
        for collector in collectors {
            self.registry.register(collector).expect("each metric is registered once");
        }
        #[cfg(target_os = "linux")]
        {
            // Unnamespaced, as every exporter names them (`process_resident_memory_bytes`).
            let process = prometheus::process_collector::ProcessCollector::for_self();
            self.process.register(Box::new(process)).expect("registered once");
        }
    }

    /// Counts a request to `route` (the router's template, `None`: no route matched).
    pub(crate) fn request(&self, route: Option<&str>, method: &str, status: u16, took: Duration) {
        if !self.on {
            return;
        }
        let route = route.unwrap_or("unmatched");
        let method = standard_method(method);
        let status = status_text(status);
        self.requests.with_label_values(&[route, method, status]).inc();
        self.request_seconds.with_label_values(&[route, method]).observe(took.as_secs_f64());
    }

    /// Counts a kept run.
    pub(crate) fn run(&self, run: &RunSeen<'_>) {
        if !self.on {
            return;
        }
        let (provider, model) = (run.provider, run.model);
        self.runs.with_label_values(&[provider, model, run.tool, run.outcome]).inc();
        self.run_tokens.with_label_values(&[provider, model, "input"]).inc_by(run.input_tokens);
        self.run_tokens.with_label_values(&[provider, model, "output"]).inc_by(run.output_tokens);
        if run.cost_usd > 0.0 {
            self.run_cost.with_label_values(&[provider, model]).inc_by(run.cost_usd);
        }
        if let Some(took) = run.duration {
            self.run_seconds.with_label_values(&[provider, model]).observe(took.as_secs_f64());
        }
        if let Some(first) = run.first_token {
            let histogram = self.first_token_seconds.with_label_values(&[provider, model]);
            histogram.observe(first.as_secs_f64());
        }
        for (kind, count) in run.findings {
            self.dlp_findings.with_label_values(&[kind]).inc_by(*count);
        }
    }

    /// Counts a request refused by the rate limit.
    pub(crate) fn rate_limited(&self) {
        if !self.on {
            return;
        }
        self.rate_limited.inc();
    }

    /// Counts a read answered from the cache (`hit`) or from the database.
    pub(crate) fn cache(&self, hit: bool) {
        if !self.on {
            return;
        }
        self.cache.with_label_values(&[if hit { "hit" } else { "miss" }]).inc();
    }

    /// The metrics in Prometheus' text format, with `now`'s gauges.
    pub(crate) fn render(&self, now: &Now) -> String {
        self.runs_active.set(gauge(now.runs_active));
        self.runs_waiting.set(gauge(now.runs_waiting));
        self.mcp_sessions.set(gauge(now.mcp_sessions));
        if let Some(open) = now.studio_sessions {
            self.studio_sessions.set(i64::try_from(open).unwrap_or(i64::MAX));
        }
        if let Some(pool) = now.pool {
            let busy = pool.open.saturating_sub(pool.idle);
            self.db_connections.with_label_values(&["idle"]).set(i64::from(pool.idle));
            self.db_connections.with_label_values(&["in_use"]).set(i64::from(busy));
            self.db_max_connections.set(i64::from(pool.max));
        }
        let mut families = self.registry.gather();
        families.extend(self.process.gather());
        let mut text = Vec::new();
        // Writing to a vector fails only on a metric the registry would have refused.
        let _ = TextEncoder::new().encode(&families, &mut text);
        String::from_utf8(text).unwrap_or_default()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// The content type of [`Metrics::render`]'s text.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

fn gauge(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// `method` if it is one of HTTP's standard methods, else `other` (a label value a client
/// cannot multiply).
fn standard_method(method: &str) -> &str {
    match method {
        "GET" | "HEAD" | "POST" | "PUT" | "DELETE" | "PATCH" | "OPTIONS" => method,
        _ => "other",
    }
}

/// The status code as a label value, without allocating.
fn status_text(status: u16) -> &'static str {
    const TEXT: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];
    macro_rules! codes {
        ($($code:literal)*) => {
            match status { $($code => stringify!($code),)* _ => TEXT[usize::from(status / 100).clamp(1, 5) - 1] }
        };
    }
    codes!(200 201 204 206 301 302 303 304 307 308 400 401 402 403 404 405 406 409 410 412 413 415 422 429 500 501 502 503 504)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_runs_show_in_the_text_format_with_their_labels() {
        let metrics = Metrics::new();
        metrics.request(Some("/api/v1/tools/{slug}"), "GET", 200, Duration::from_millis(3));
        metrics.request(None, "BREW", 404, Duration::from_millis(1));
        let findings = [("email".to_owned(), 2)].into_iter().collect();
        metrics.run(&RunSeen {
            provider: "mock",
            model: "mock-1",
            tool: "summarize",
            outcome: "ok",
            input_tokens: 12,
            output_tokens: 5,
            cost_usd: 0.25,
            duration: Some(Duration::from_millis(120)),
            first_token: Some(Duration::from_millis(40)),
            findings: &findings,
        });
        metrics.rate_limited();
        metrics.cache(true);
        let pool = llmtool_registry::PoolUse { open: 3, idle: 1, max: 8 };
        let now = Now {
            runs_active: 2,
            runs_waiting: 1,
            mcp_sessions: 4,
            studio_sessions: Some(3),
            pool: Some(pool),
        };
        let text = metrics.render(&now);
        for line in [
            r#"llmtool_http_requests_total{method="GET",route="/api/v1/tools/{slug}",status="200"} 1"#,
            r#"llmtool_http_requests_total{method="other",route="unmatched",status="404"} 1"#,
            r#"llmtool_http_request_duration_seconds_bucket{method="GET",route="/api/v1/tools/{slug}",le="0.004"} 1"#,
            r#"llmtool_http_request_duration_seconds_bucket{method="GET",route="/api/v1/tools/{slug}",le="0.002"} 0"#,
            r#"llmtool_runs_total{model="mock-1",outcome="ok",provider="mock",tool="summarize"} 1"#,
            r#"llmtool_run_tokens_total{direction="input",model="mock-1",provider="mock"} 12"#,
            r#"llmtool_run_cost_usd_total{model="mock-1",provider="mock"} 0.25"#,
            r#"llmtool_run_time_to_first_token_seconds_bucket{model="mock-1",provider="mock",le="0.05"} 1"#,
            r#"llmtool_dlp_findings_total{kind="email"} 2"#,
            "llmtool_rate_limited_total 1",
            r#"llmtool_read_cache_requests_total{result="hit"} 1"#,
            "llmtool_runs_active 2",
            "llmtool_mcp_sessions 4",
            "llmtool_studio_sessions 3",
            r#"llmtool_db_connections{state="in_use"} 2"#,
            "llmtool_db_max_connections 8",
            "# TYPE llmtool_http_requests_total counter",
        ] {
            assert!(text.lines().any(|l| l == line), "no line `{line}` in:\n{text}");
        }
        #[cfg(target_os = "linux")]
        assert!(text.contains("\nprocess_resident_memory_bytes "), "{text}");
    }

    #[test]
    fn status_labels_are_the_codes_or_their_class() {
        assert_eq!(status_text(200), "200");
        assert_eq!(status_text(429), "429");
        assert_eq!(status_text(418), "4xx");
        assert_eq!(status_text(599), "5xx");
        assert_eq!(status_text(0), "1xx");
        assert_eq!(status_text(999), "5xx");
    }
}
