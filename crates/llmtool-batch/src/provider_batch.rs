//! `--via provider-batch`: the rows handed to the provider's own batch engine at its batch
//! price. The rows to do are sent in batches (each written down in the journal before it is
//! sent), the batches are polled with a growing wait, and each one's answers are checked
//! against the tool's expected output and written, with the batch marked collected in the
//! same journal transaction. A run stopped at any point is resumed by running it again: the
//! batches already sent are polled, not sent again.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use llmtool_providers::batch_api::{Answer, BatchClient, BatchStatus, poll_delay};
use llmtool_providers::run::{RunReport, RunRequest};
use llmtool_runtime::worst_case::{self, Sending};
use llmtool_runtime::{Ended, ParamOverrides, Runtime, Subject, ToKeep};

use crate::journal::{Entry, Journal, Met};
use crate::output::{OutputFile, OutputFormat, OutputRecord};
use crate::run::{
    Batch, BatchError, LOOKUP, MET_GROUP, Opened, Progress, ProviderBatchOptions, Summary, look_up,
};
use crate::submitted::{ProviderBatch, SubmittedRow};

/// The rows of a provider batch being gathered, and their encoded requests.
#[derive(Default)]
struct Part {
    rows: Vec<SubmittedRow>,
    encoded: Vec<String>,
    bytes: usize,
}

/// What the submitting and collecting share.
struct Session<'a> {
    batch: &'a Batch,
    runtime: &'a Runtime,
    client: BatchClient<'a>,
    /// Any row's request: the rows share the model, the expected output and the price.
    sample: RunRequest,
    journal: &'a Journal,
    format: OutputFormat,
    pass: i64,
    progress: &'a Progress,
}

pub(crate) async fn run(
    batch: &Batch,
    runtime: &Runtime,
    progress: &Progress,
    opened: Opened<'_>,
    options: &ProviderBatchOptions,
) -> Result<Summary, BatchError> {
    let Opened { format, rows, journal, _lock, mut output, mut shaper, start, mut summary } =
        opened;
    let sample = runtime.request(&batch.tool, String::new(), ParamOverrides::default())?;
    // The providers' batch engines take chat requests: pictures would be made, paid for and
    // lost (or every row refused).
    if matches!(sample.spec.kind, llmtool_format::output::OutputKind::Image(_)) {
        return Err(llmtool_providers::ProviderError::Unsupported(
            "an image tool cannot go through a provider's batch engine; run the batch without `--via provider-batch`".into(),
        )
        .into());
    }
    let endpoint = sample.target.endpoint.clone();
    let client = BatchClient::new(runtime.transport(), &endpoint)?;
    let session = Session {
        batch,
        runtime,
        client,
        sample,
        journal: &journal,
        format,
        pass: start.pass,
        progress,
    };
    // A batch whose sending was cut short may or may not have reached the provider: its rows
    // are sent again (the one case where a row may be paid twice; it is still written once).
    journal.forget_unsent().await?;
    let pending = journal.pending_keys().await?;
    let (most_rows, most_bytes) = session.client.limits();
    let most_rows = most_rows.min(options.rows_per_batch.max(1));
    let spent = journal.cost().await?;
    let mut reserved = journal.reserved_cost().await?;
    let mut part = Part::default();
    let (mut entries, mut met) = (Vec::new(), Vec::new());
    let mut rows = rows.map(|row| row.map(|row| shaper.shape(row)));
    loop {
        let chunk: Vec<_> = rows.by_ref().take(LOOKUP).collect();
        if chunk.is_empty() {
            break;
        }
        for looked_up in look_up(&journal, chunk).await {
            let (row, done) = looked_up?;
            let retry = batch.retry_failed && done.as_deref() == Some("failed");
            if done.is_some() && !retry {
                summary.skipped += 1;
                progress.skipped.fetch_add(1, Ordering::Relaxed);
                met.push(Met { key: row.entry.key, row_index: row.entry.row_index });
                continue;
            }
            if pending.contains(&row.entry.key) {
                // In a batch an earlier run sent: collected below.
                continue;
            }
            let Some(request) = row.request else {
                // Invalid: nothing to send; written now.
                output.append(&row.entry.record).map_err(|e| batch.output_error(e))?;
                summary.count(&row.entry);
                progress.done.fetch_add(1, Ordering::Relaxed);
                progress.not_ok.fetch_add(1, Ordering::Relaxed);
                entries.push(row.entry);
                continue;
            };
            let worst = worst_case::estimate(&request, None, Sending::Once).worst_cost;
            if let Some(limit) = batch.max_cost {
                // Only what surely fits is sent: its answers are paid for whatever comes.
                match worst {
                    Some(worst) if spent + reserved + worst <= limit => reserved += worst,
                    _ => {
                        summary.left_at_budget += 1;
                        continue;
                    }
                }
            }
            let custom_id = custom_id(&row.entry.key);
            let encoded = session.client.encode(&custom_id, &request.batch_request());
            if !part.rows.is_empty() && part.bytes + encoded.len() + 1 > most_bytes {
                session.submit(std::mem::take(&mut part), &mut summary).await?;
            }
            part.bytes += encoded.len() + 1;
            part.encoded.push(encoded);
            part.rows.push(SubmittedRow {
                custom_id,
                key: row.entry.key,
                row_index: row.entry.row_index,
                record: serde_json::to_string(&row.record).unwrap_or_default(),
                worst_cost: worst,
            });
            if part.rows.len() >= most_rows {
                session.submit(std::mem::take(&mut part), &mut summary).await?;
            }
        }
        if !entries.is_empty() || met.len() >= MET_GROUP {
            let length = output.sync().map_err(|e| batch.output_error(e))?;
            journal.commit(&entries, &met, start.pass, length).await?;
            entries.clear();
            met.clear();
        }
    }
    if !part.rows.is_empty() {
        session.submit(part, &mut summary).await?;
    }
    let length = output.sync().map_err(|e| batch.output_error(e))?;
    journal.commit(&entries, &met, start.pass, length).await?;
    if !options.detach {
        session.follow(options, &mut output, &mut summary).await?;
    }
    summary.awaiting = journal.pending_keys().await?.len() as u64;
    *progress.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    let every_row_met = summary.left_at_budget == 0;
    batch.close(&journal, format, start.pass, every_row_met, &mut summary).await?;
    Ok(summary)
}

impl Session<'_> {
    /// Sends `part` as one provider batch, written down first.
    async fn submit(&self, part: Part, summary: &mut Summary) -> Result<(), BatchError> {
        let number = summary.provider_batches.len() + 1;
        let label = format!("{}-run{}-part{number}", self.stem(), self.pass);
        let provider = &self.sample.target.endpoint.provider;
        self.journal.begin_submission(&label, provider, &part.rows).await?;
        self.set_waiting(format!(
            "sending {} row(s) to {provider}'s batch engine",
            part.rows.len()
        ));
        let id = self.client.submit(&part.encoded, &self.sample.target.model, &label).await?;
        self.journal.submitted(&label, &id).await?;
        summary.submitted += part.rows.len() as u64;
        summary.provider_batches.push(id);
        Ok(())
    }

    /// The output's name without its extension, in letters, digits, `-` and `_`: the start
    /// of a batch's label, which the provider shows.
    fn stem(&self) -> String {
        let stem = self.batch.out.file_stem().and_then(|s| s.to_str()).unwrap_or("batch");
        let clean: String = stem
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .take(40)
            .collect();
        format!("llmtool-{clean}")
    }

    fn set_waiting(&self, note: String) {
        *self.progress.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some(note);
    }

    /// Polls this provider's batches not collected yet until every one has ended and is
    /// collected.
    async fn follow(
        &self,
        options: &ProviderBatchOptions,
        output: &mut OutputFile,
        summary: &mut Summary,
    ) -> Result<(), BatchError> {
        let provider = &self.sample.target.endpoint.provider;
        let mut polls = 0;
        loop {
            let open: Vec<ProviderBatch> = self
                .journal
                .provider_batches()
                .await?
                .into_iter()
                .filter(|b| b.collected_at.is_none() && &b.provider == provider)
                .collect();
            let mut waiting = Vec::new();
            for open_batch in open {
                let Some(id) = &open_batch.batch_id else { continue };
                let status = self.client.status(id).await?;
                if status.ended {
                    self.collect(&open_batch.label, &status, output, summary).await?;
                } else {
                    waiting.push(describe(&status));
                }
            }
            if waiting.is_empty() {
                return Ok(());
            }
            let wait = poll_delay(options.first_poll, options.longest_poll, polls);
            self.set_waiting(format!(
                "waiting for {}; next look in {}s",
                waiting.join(", "),
                wait.as_secs()
            ));
            tokio::time::sleep(wait).await;
            polls += 1;
        }
    }

    /// Writes the answers of ended batch `label` and marks it collected.
    async fn collect(
        &self,
        label: &str,
        status: &BatchStatus,
        output: &mut OutputFile,
        summary: &mut Summary,
    ) -> Result<(), BatchError> {
        let rows = self.journal.submitted_rows(label).await?;
        let mut answers: HashMap<String, Result<Answer, String>> = self
            .client
            .results(status, &self.sample.batch_request())
            .await?
            .into_iter()
            .map(|result| (result.custom_id, result.answer))
            .collect();
        let keys: Vec<&str> = rows.iter().map(|row| row.key.as_str()).collect();
        let done_before = self.journal.outcomes(&keys).await?;
        let mut entries = Vec::with_capacity(rows.len());
        let mut answered = Vec::new();
        for row in rows {
            let answer = answers.remove(&row.custom_id).unwrap_or_else(|| {
                let why = status.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
                Err(format!(
                    "the provider's batch {} ended ({}) with no answer for this row{why}",
                    status.id, status.status
                ))
            });
            let report = answer.map(|answer| self.sample.batch_report(&answer));
            if let Ok(report) = &report {
                answered.push((row.row_index, report.clone()));
            }
            let entry = self.entry(&row, report, done_before.contains_key(&row.key));
            output.append(&entry.record).map_err(|e| self.batch.output_error(e))?;
            summary.count(&entry);
            self.count(&entry);
            entries.push(entry);
        }
        let length = output.sync().map_err(|e| self.batch.output_error(e))?;
        self.journal.collect(label, &entries, self.pass, length).await?;
        // Logged once the batch is marked collected, all in one go: a run stopped before that
        // collects it again, and its rows must not be counted twice.
        let runs =
            answered.iter().filter_map(|(row_index, report)| self.run_of(*row_index, report));
        self.runtime.keep_all(runs.collect()).await;
        Ok(())
    }

    /// The run of answered `row`, for the run log to keep with every other run. Its values
    /// stay in the dataset: the journal keeps only the row's record, so the log has its row
    /// number.
    fn run_of(&self, row_index: u64, report: &RunReport) -> Option<ToKeep> {
        let subject = Subject::with_values(
            "batch",
            self.batch.tool_path.clone(),
            &self.batch.tool,
            serde_json::json!({ "row": row_index }),
        );
        let started = jiff::Timestamp::now();
        self.runtime.to_keep(&subject, &self.sample, started, Ended::Report(report))
    }

    /// The entry of `row` answered as `report` says (the expected output enforced, the cost
    /// at the batch price), or why it has no answer.
    fn entry(
        &self,
        row: &SubmittedRow,
        report: Result<RunReport, String>,
        replaces: bool,
    ) -> Entry {
        let mut record: OutputRecord =
            serde_json::from_str(&row.record).unwrap_or_else(|_| OutputRecord {
                id: row.row_index.to_string(),
                row: row.row_index,
                outcome: String::new(),
                output: None,
                error: None,
                provider: Some(self.sample.target.endpoint.provider.clone()),
                model: Some(self.sample.target.model.clone()),
                input_tokens: None,
                output_tokens: None,
                cost_usd: None,
                latency_ms: None,
                key: row.key.clone(),
            });
        match report {
            Ok(report) => record.answered(report),
            Err(error) => {
                "failed".clone_into(&mut record.outcome);
                record.error = Some(error);
            }
        }
        Entry {
            key: row.key.clone(),
            row_index: row.row_index,
            row_id: record.id.clone(),
            outcome: record.outcome.clone(),
            cost_usd: record.cost_usd,
            record: record.line(self.format),
            replaces,
        }
    }

    fn count(&self, entry: &Entry) {
        let progress = self.progress;
        let nanos = (entry.cost_usd.unwrap_or(0.0).max(0.0) * 1e9).round() as u64;
        progress.cost_nanos.fetch_add(nanos, Ordering::Relaxed);
        progress.done.fetch_add(1, Ordering::Relaxed);
        if entry.outcome != "ok" {
            progress.not_ok.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A batch's place, in a few words: `batch_1 (in_progress, 40 of 100 answered)`.
pub fn describe(status: &BatchStatus) -> String {
    match (status.succeeded, status.failed, status.total) {
        (Some(ok), failed, Some(total)) if total > 0 => format!(
            "{} ({}, {} of {total} answered)",
            status.id,
            status.status,
            ok + failed.unwrap_or(0)
        ),
        _ => format!("{} ({})", status.id, status.status),
    }
}

/// A row's id in a provider batch, made from its key: at most 64 letters, digits and `-`
/// (what every provider takes). The hash is cut to 48 hex digits (192 bits), still unique.
fn custom_id(key: &str) -> String {
    let (hash, occurrence) = key.split_once('/').map_or((key, None), |(h, n)| (h, Some(n)));
    let mut id: String = hash.chars().filter(char::is_ascii_alphanumeric).take(48).collect();
    if let Some(occurrence) = occurrence {
        id.push('-');
        id.extend(occurrence.chars().filter(char::is_ascii_digit).take(12));
    }
    id
}

#[cfg(test)]
mod tests {
    use super::custom_id;

    #[test]
    fn custom_ids_fit_every_provider() {
        let hash = "ab".repeat(32);
        assert_eq!(custom_id(&hash).len(), 48);
        let repeated = custom_id(&format!("{hash}/12"));
        assert_eq!(repeated, format!("{}-12", &hash[..48]));
        assert!(repeated.len() <= 64);
        assert_ne!(custom_id(&format!("{hash}/2")), custom_id(&hash));
    }
}
