//! A standalone mock of the three providers' batch engines (OpenAI Batch API, Anthropic
//! Message Batches, Gemini batch mode), to try `llmtool batch --via provider-batch` by hand
//! or from scripts. Prints its URL, then serves until killed.
//!
//! usage: `mock-batches [POLLS_PER_STAGE=1]`

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let polls = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(1);
    let mock = llmtool_testkit::batches::BatchMock::start(polls).await;
    println!("{}", mock.url);
    std::future::pending::<()>().await;
}
