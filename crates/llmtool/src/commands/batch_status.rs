//! `llmtool batch status` and `llmtool batch cancel`: a provider's batch looked up by its id,
//! or every batch a `--via provider-batch` run sent (listed in its output's journal).

use std::path::PathBuf;

use anyhow::Context as _;
use llmtool_batch::Journal;
use llmtool_batch::provider_batch::describe;
use llmtool_providers::batch_api::BatchClient;
use llmtool_runtime::Runtime;

use crate::cli::ModelArgs;
use crate::commands::batch::BatchAction;
use crate::outcome::Outcome;
use crate::settings;

/// A batch to look at: its provider, its id, and when its answers were collected.
struct Known {
    provider: String,
    id: String,
    collected_at: Option<String>,
}

pub(crate) fn run(action: &BatchAction) -> anyhow::Result<Outcome> {
    let (id, target, cancel) = match action {
        BatchAction::Status { id, target } => (id, target, false),
        BatchAction::Cancel { id, target } => (id, target, true),
    };
    let providers = settings::load_providers(target.setup.config.as_deref())?;
    let runtime = Runtime::new(providers, settings::runtime_options(target))?;
    let threads = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    threads.block_on(async {
        let batches = known(id, target).await?;
        if batches.is_empty() {
            eprintln!("{id} lists no provider batches: it was not run with --via provider-batch");
        }
        for batch in batches {
            let endpoint = runtime.providers().endpoint(&batch.provider)?;
            let client = BatchClient::new(runtime.transport(), &endpoint)?;
            let on = format!("{} on {}", batch.id, batch.provider);
            match (&batch.collected_at, cancel) {
                (Some(when), _) => println!("{on}: ended; its answers were collected at {when}"),
                (None, true) => {
                    client.cancel(&batch.id).await?;
                    println!(
                        "{on}: asked to stop; run the batch again to collect what it answered"
                    );
                }
                (None, false) => {
                    let status = client.status(&batch.id).await?;
                    let error =
                        status.error.as_deref().map(|e| format!("; {e}")).unwrap_or_default();
                    let end =
                        if status.ended { "; ended, run the batch again to collect" } else { "" };
                    println!("{} on {}{error}{end}", describe(&status), batch.provider);
                }
            }
        }
        Ok(Outcome::Ok)
    })
}

/// The batches `id` names: those in the journal of output `id`, or the provider batch `id`
/// (its provider named by `--provider`, or known by the id's form).
async fn known(id: &str, target: &ModelArgs) -> anyhow::Result<Vec<Known>> {
    let journal = PathBuf::from(format!("{id}.journal"));
    if journal.is_file() {
        let journal = Journal::open(&journal).await?;
        return Ok(journal
            .provider_batches()
            .await?
            .into_iter()
            .filter_map(|b| {
                Some(Known { provider: b.provider, id: b.batch_id?, collected_at: b.collected_at })
            })
            .collect());
    }
    let provider = target.provider.clone().or_else(|| provider_of(id)).with_context(|| {
        format!("{id} is neither a batch's output nor an id of a known form: name its provider with --provider")
    })?;
    Ok(vec![Known { provider, id: id.to_owned(), collected_at: None }])
}

/// The provider whose batch ids look like `id`.
fn provider_of(id: &str) -> Option<String> {
    let provider = if id.starts_with("msgbatch_") {
        "anthropic"
    } else if id.starts_with("batch_") {
        "openai"
    } else if id.starts_with("batches/") {
        "gemini"
    } else {
        return None;
    };
    Some(provider.to_owned())
}
