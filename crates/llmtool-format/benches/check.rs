//! Checking one tool file, stage by stage, on two files of the 10,000-file corpus that
//! `bench/check.sh` times whole (`../shared/bench/gen_corpus.py`, seed 7): one with an avatar
//! (and so an LT505 info to report), one without. `serde_json` parsing the same bytes into a
//! `Value` is the yardstick for the parser. In-process figures, free of the file system's
//! noise, for deciding what the whole-process benchmark cannot resolve.
//!
//! Run: `cargo bench -p llmtool-format --bench check`.

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use llmtool_format::Document;
use llmtool_format::report::{Source, human};

fn main() {
    divan::main();
}

const FILES: [(&str, &str); 2] = [
    ("with-avatar", include_str!("fixtures/with-avatar.json")),
    ("plain", include_str!("fixtures/plain.json")),
];

fn text(name: &str) -> &'static str {
    FILES.iter().find(|(n, _)| *n == name).map_or("", |(_, text)| text)
}

#[divan::bench(args = ["with-avatar", "plain"])]
fn serde_json_value(bencher: Bencher<'_, '_>, name: &str) {
    let text = text(name);
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| serde_json::from_str::<serde_json::Value>(black_box(text)).ok());
}

#[divan::bench(args = ["with-avatar", "plain"])]
fn parse(bencher: Bencher<'_, '_>, name: &str) {
    let text = text(name);
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| llmtool_format::syntax::parse(black_box(text)));
}

#[divan::bench(args = ["with-avatar", "plain"])]
fn check(bencher: Bencher<'_, '_>, name: &str) {
    let text = text(name);
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| Document::from_vec(black_box(text.as_bytes().to_vec())));
}

#[divan::bench]
fn report(bencher: Bencher<'_, '_>) {
    let document = Document::from_text(text("with-avatar").to_owned());
    bencher.bench(|| {
        let source = Source::new("tool.json", &document.text);
        human(&source, black_box(&document.diagnostics), false)
    });
}
