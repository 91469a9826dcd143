//! Scanning is linear in the text, whatever the text. A hostile text (one long line dense with
//! secret keywords, values, block markers and other candidates) is scanned, and every finding
//! located, at n and at 4n bytes: the larger must take well under 16 times as long, which is
//! what a scan that reads the line again for each hit on it takes (it did: 7.6 s for 1 MB of
//! the line, 132 s for 4 MB).
//!
//! This is the one place the tests look at time, and only as a ratio within one process: each
//! size is timed several times and the fastest kept, so a busy machine slows both alike. A
//! linear scan gives about 4; the bound is 8.

use std::time::{Duration, Instant};

use llmtool_dlp::{Lines, Scanner};
use proptest::prelude::*;

/// The pieces hostile lines are made of: keywords of the secret rules, values they take,
/// the markers of multi-line secrets, and candidates of the other kinds.
const PIECES: &[&str] = &[
    "api_key=0123456789abcdef ",
    "token ",
    "secret ",
    "password ",
    "aws ",
    "AKIAZ4XQ7R2M5T2N3W6P ",
    "ghp_4Zs8fPq2LmN7xVb3KcT9wYr1HdJ6eGa5UoQi ",
    "curl -H ",
    "Authorization: Bearer 9f8e7d6c5b4a3928 ",
    "-----BEGIN RSA PRIVATE KEY----- ",
    "eyJhbGciOiJIUzI1NiJ9. ",
    "xoxb-2468013579- ",
    "https://user:pa55word@example.com/ ",
    "jane.doe@example.com ",
    "+1 415 555 2671 ",
    "4111 1111 1111 1111 ",
    "GB82 WEST 1234 5698 7654 32 ",
    "10.0.3.7 ",
    "clé ",
    "0123456789 ",
];

/// `unit` repeated to `bytes` bytes (at a character's start), all on one line.
fn line_of(unit: &str, bytes: usize) -> String {
    let mut text = unit.repeat(bytes / unit.len() + 1);
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

/// The fastest of a few scans of `text`, each locating every finding as `llmtool scan` does.
fn scan_time(scanner: &Scanner, text: &str) -> Duration {
    (0..3)
        .map(|_| {
            let started = Instant::now();
            let lines = Lines::new(text);
            for finding in scanner.scan(text) {
                std::hint::black_box(lines.locate(finding.span.start));
                std::hint::black_box(lines.locate(finding.span.end));
            }
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// How many times longer 4n bytes of `unit` take to scan than n bytes.
fn growth(unit: &str, n: usize) -> f64 {
    let scanner = Scanner::with_defaults();
    // Compiles the rules the unit wakes before anything is timed.
    scanner.scan(unit);
    let small = scan_time(&scanner, &line_of(unit, n));
    let large = scan_time(&scanner, &line_of(unit, 4 * n));
    large.as_secs_f64() / small.as_secs_f64().max(1e-6)
}

#[test]
fn the_reported_line_scans_in_linear_time() {
    let ratio = growth("api_key=0123456789abcdef token secret password aws ", 256 << 10);
    assert!(ratio < 8.0, "4x the text took {ratio:.1}x the time");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn any_hostile_line_scans_in_linear_time(
        picks in proptest::collection::vec(0..PIECES.len(), 2..10),
    ) {
        let unit: String = picks.iter().map(|&i| PIECES[i]).collect();
        let ratio = growth(&unit, 128 << 10);
        prop_assert!(ratio < 8.0, "4x of {unit:?} took {ratio:.1}x the time");
    }
}
