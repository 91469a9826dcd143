//! How fast the scanner reads text with nothing to find, and text dense with findings.

use llmtool_dlp::{Redaction, Scanner};

fn main() {
    divan::main();
}

/// About 1 MB of prose, with no sensitive value.
fn clean_text() -> String {
    let sentence = "The quarterly review covers revenue, churn and the hiring plan for 2025; \
                    see section 4.2 for the 12 open questions and version 1.8.3 of the model. ";
    sentence.repeat(1_000_000 / sentence.len())
}

/// About 1 MB of prose with an e-mail address, a phone number, a card and a key per line.
fn dense_text() -> String {
    let line = "Write to jane.doe@example.com or call +1 415 555 2671; card 4111 1111 1111 1111, \
                key ghp_4Zs8fPq2LmN7xVb3KcT9wYr1HdJ6eGa5UoQi, host 10.0.3.7.\n";
    line.repeat(1_000_000 / line.len())
}

#[divan::bench]
fn scan_clean_megabyte(bencher: divan::Bencher<'_, '_>) {
    let scanner = Scanner::with_defaults();
    let text = clean_text();
    bencher.counter(divan::counter::BytesCount::of_str(&text)).bench(|| scanner.scan(&text));
}

#[divan::bench]
fn scan_and_redact_dense_megabyte(bencher: divan::Bencher<'_, '_>) {
    let scanner = Scanner::with_defaults();
    let text = dense_text();
    bencher.counter(divan::counter::BytesCount::of_str(&text)).bench(|| {
        let findings = scanner.scan(&text);
        Redaction::new().redact(&text, &findings)
    });
}
