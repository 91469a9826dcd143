//! Rendering a prompt: llmtool's compiled `Template` against minijinja on the same template
//! text, values and output (multi-select items joined with ", ").
//!
//! Run: `cargo bench -p llmtool-format --bench render` (figures in docs/benchmarks.md).

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use llmtool_format::template::{Template, Value};

fn main() {
    divan::main();
}

const NAMES: [&str; 4] = ["language", "task", "code", "focus"];

/// A realistic prompt: ~700 bytes of text and four placeholders, one a multi-select.
fn small_prompt() -> String {
    "You are a senior {{ language }} engineer pairing with me. Read the code below and {{ task }}. \
     Keep the existing style, explain each change in one line, and return the complete revised \
     code in a single fenced block. Pay particular attention to {{ focus }}. Do not rename public \
     functions, do not add dependencies, and keep every test passing. If something is ambiguous, \
     say so before the code rather than guessing. Prefer small, reviewable changes over rewrites, \
     and mention any follow-up work you would suggest at the end, as a short list.\n\nCode:\n{{ code }}\n"
        .to_owned()
}

/// A 16 MiB prompt with a placeholder every 4 KiB, to measure throughput.
fn large_prompt() -> String {
    let chunk = format!("{} {{{{ code }}}} ", "lorem ipsum dolor sit amet ".repeat(150));
    chunk.repeat(16 * 1024 * 1024 / chunk.len())
}

fn values() -> [Value; 4] {
    [
        Value::Text("Rust".into()),
        Value::Text("find the bug that makes the test fail".into()),
        Value::Text("fn add(a: i32, b: i32) -> i32 { a - b }".into()),
        Value::List(vec!["correctness".into(), "error handling".into(), "naming".into()]),
    ]
}

fn minijinja_source(prompt: &str) -> String {
    prompt.replace("{{ focus }}", "{{ focus|join(\", \") }}")
}

fn minijinja_context() -> minijinja::Value {
    minijinja::context! {
        language => "Rust",
        task => "find the bug that makes the test fail",
        code => "fn add(a: i32, b: i32) -> i32 { a - b }",
        focus => vec!["correctness", "error handling", "naming"],
    }
}

fn bench_llmtool(bencher: Bencher<'_, '_>, prompt: &str) {
    let template = Template::compile(prompt, &NAMES);
    let values = values();
    let out_len = template.render(&values).len();
    bencher.counter(BytesCount::new(out_len)).bench(|| template.render(black_box(&values)));
}

fn bench_minijinja(bencher: Bencher<'_, '_>, prompt: &str) {
    let source = minijinja_source(prompt);
    let mut env = minijinja::Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
            .expect("the syntax is valid"),
    );
    let template = env.template_from_str(&source).expect("the template compiles");
    let context = minijinja_context();
    let reference = Template::compile(prompt, &NAMES).render(&values());
    let out = template.render(&context).expect("the template renders");
    assert_eq!(out, reference, "both engines must produce the same prompt");
    bencher.counter(BytesCount::new(out.len())).bench(|| template.render(black_box(&context)));
}

#[divan::bench]
fn small_llmtool(bencher: Bencher<'_, '_>) {
    bench_llmtool(bencher, &small_prompt());
}

#[divan::bench]
fn small_minijinja(bencher: Bencher<'_, '_>) {
    bench_minijinja(bencher, &small_prompt());
}

#[divan::bench(sample_count = 30)]
fn large_llmtool(bencher: Bencher<'_, '_>) {
    bench_llmtool(bencher, &large_prompt());
}

#[divan::bench(sample_count = 30)]
fn large_minijinja(bencher: Bencher<'_, '_>) {
    bench_minijinja(bencher, &large_prompt());
}
