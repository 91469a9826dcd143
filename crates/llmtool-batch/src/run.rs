//! Running a batch: the rows streamed from the dataset, each made into a prompt, skipped when
//! the journal has it, run `concurrency` at a time through the shared run path, and written in
//! groups: appended to the output, synced, then committed to the journal with the output's
//! new length.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::StreamExt as _;
use llmtool_core::model::Tool;
use llmtool_core::template::{Inputs, ToolTemplate};
use llmtool_providers::run::RunOptions;
use llmtool_runtime::{ParamOverrides, Rejected, Runtime};

use crate::input::{InputError, Mapping, Row, RowReader, row_key};
use crate::journal::{Entry, Journal, JournalError};
use crate::output::{OutputFile, OutputFormat, OutputRecord};

/// How many finished rows are written and committed together at most.
const GROUP: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("the output {path}: {source}")]
    Output { path: String, source: std::io::Error },
    #[error("{0}: name the output .jsonl or .csv")]
    OutputFormat(String),
}

/// A batch: the tool, the dataset, the output, and how to run.
#[derive(Debug, Clone)]
pub struct Batch {
    pub tool: Tool,
    pub data: PathBuf,
    pub out: PathBuf,
    pub mapping: Mapping,
    pub id_column: Option<String>,
    pub concurrency: usize,
    /// Run again the rows that failed before (their new records replace the old).
    pub retry_failed: bool,
    /// Write the output in the rows' order (it is written again at the end).
    pub keep_order: bool,
    /// Start no new row once this many US dollars are spent, counting earlier runs of the
    /// batch (rows already running finish; the rest stay to do).
    pub max_cost: Option<f64>,
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub rows: u64,
    /// Done by an earlier run.
    pub skipped: u64,
    pub ok: u64,
    pub rejected: u64,
    pub failed: u64,
    pub invalid: u64,
    /// US dollars spent by this run (the priced rows).
    pub cost_usd: f64,
    /// Rows left to do because the batch reached `max_cost`.
    pub left_at_budget: u64,
}

/// What a batch would send, worked out without sending anything (`--estimate`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    pub rows: u64,
    /// Rows whose values cannot fill the prompt (nothing would be sent).
    pub invalid: u64,
    /// Input tokens, estimated from the characters (4 a token).
    pub input_tokens: u64,
    /// The cost if every answer is as long as allowed, over the rows that have one.
    pub worst_cost: f64,
    /// Rows with no worst case: an unpriced model, or no output limit known.
    pub unbounded_rows: u64,
}

/// What preparing a row needs.
#[derive(Clone, Copy)]
struct Context<'a> {
    template: &'a ToolTemplate,
    tool_hash: &'a str,
    runtime: &'a Runtime,
    journal: &'a Journal,
    format: OutputFormat,
    /// Rows the journal has done, counted as they are met.
    skipped: &'a AtomicU64,
}

/// A row made ready: its key and record so far, and the request to send (none when its
/// values could not fill the prompt).
struct Prepared {
    entry: Entry,
    record: OutputRecord,
    request: Option<llmtool_providers::run::RunRequest>,
}

impl Batch {
    /// The journal's path: the output's, with `.journal` added.
    pub fn journal_path(&self) -> PathBuf {
        let mut name = self.out.clone().into_os_string();
        name.push(".journal");
        PathBuf::from(name)
    }

    /// Runs every row not done yet.
    pub async fn run(&self, runtime: &Runtime) -> Result<Summary, BatchError> {
        let format = OutputFormat::of(&self.out)
            .ok_or_else(|| BatchError::OutputFormat(self.out.display().to_string()))?;
        // The dataset first: a mistyped path leaves no output or journal behind.
        let rows = RowReader::open(&self.data, self.id_column.clone())?;
        let output_error =
            |source| BatchError::Output { path: self.out.display().to_string(), source };
        let journal_path = self.journal_path();
        let new_journal = !journal_path.exists();
        if new_journal && std::fs::metadata(&self.out).is_ok_and(|m| m.len() > 0) {
            // Not this batch's output: cutting it back to nothing would lose it.
            return Err(output_error(std::io::Error::other(format!(
                "{} exists and no journal says what is in it; choose another output, or move it away",
                self.out.display()
            ))));
        }
        let _lock = lock(&journal_path).map_err(output_error)?;
        let journal = Journal::open(&journal_path).await?;
        let mut committed = journal.committed_bytes().await?;
        let mut output = OutputFile::open(&self.out, committed).map_err(output_error)?;
        if committed == 0 {
            output.append(&format.header()).map_err(output_error)?;
            committed = output.sync().map_err(output_error)?;
            journal.commit(&[], committed).await?;
        }
        let template = ToolTemplate::new(&self.tool);
        let tool_hash = llmtool_runtime::log::tool_hash(&self.tool);
        let mut summary = Summary::default();
        let skipped = AtomicU64::new(0);
        let budget = Budget {
            limit: self.max_cost,
            spent_before: journal.cost().await?,
            spent: AtomicU64::new(0),
            left: AtomicU64::new(0),
        };
        let budget = &budget;
        let context = Context {
            template: &template,
            tool_hash: &tool_hash,
            runtime,
            journal: &journal,
            format,
            skipped: &skipped,
        };
        let results = futures_util::stream::iter(rows)
            .map(|row| self.prepare(row, &context))
            .buffered(self.concurrency.max(1) * 2)
            .filter_map(|prepared| async move { prepared.transpose() })
            .map(|prepared| async move {
                match prepared {
                    Ok(prepared) => Ok(finish(prepared, runtime, format, budget).await),
                    Err(error) => Err(error),
                }
            })
            .buffer_unordered(self.concurrency.max(1))
            .filter_map(|done| async move { done.transpose() })
            .ready_chunks(GROUP);
        let mut results = std::pin::pin!(results);
        while let Some(group) = results.next().await {
            let mut entries = Vec::with_capacity(group.len());
            for result in group {
                let (entry, cost) = result?;
                summary.rows += 1;
                summary.cost_usd += cost.unwrap_or(0.0);
                match entry.outcome.as_str() {
                    "ok" => summary.ok += 1,
                    "rejected" => summary.rejected += 1,
                    "invalid" => summary.invalid += 1,
                    _ => summary.failed += 1,
                }
                output.append(&entry.record).map_err(output_error)?;
                entries.push(entry);
            }
            let length = output.sync().map_err(output_error)?;
            journal.commit(&entries, length).await?;
        }
        summary.skipped = skipped.load(Ordering::Relaxed);
        summary.left_at_budget = budget.left.load(Ordering::Relaxed);
        if self.keep_order || self.retry_failed {
            rewrite(&self.out, format, &journal).await?;
        }
        Ok(summary)
    }

    /// What the batch would send: rows, input tokens and the worst-case cost; nothing is
    /// sent and nothing is written.
    pub fn estimate(&self, runtime: &Runtime) -> Result<Estimate, BatchError> {
        let template = ToolTemplate::new(&self.tool);
        let mut estimate = Estimate::default();
        for row in RowReader::open(&self.data, self.id_column.clone())? {
            let row = row?;
            estimate.rows += 1;
            let values = self.mapping.values(&row, template.variables());
            let prompt = Inputs::from_json(&values, template.variables())
                .ok()
                .and_then(|inputs| template.render(&inputs).ok());
            let request = prompt.and_then(|prompt| {
                runtime.request(&self.tool, prompt, ParamOverrides::default()).ok()
            });
            let Some(request) = request else {
                estimate.invalid += 1;
                continue;
            };
            let row_estimate = request.estimate(None);
            estimate.input_tokens += row_estimate.input_tokens;
            match row_estimate.worst_cost {
                Some(cost) => estimate.worst_cost += cost,
                None => estimate.unbounded_rows += 1,
            }
        }
        Ok(estimate)
    }

    /// `row` made ready to run, or `None` when the journal has it done.
    async fn prepare(
        &self,
        row: Result<Row, InputError>,
        context: &Context<'_>,
    ) -> Result<Option<Prepared>, BatchError> {
        let Context { template, tool_hash, runtime, journal, format, skipped } = *context;
        let row = row?;
        let values = self.mapping.values(&row, template.variables());
        let rendered = Inputs::from_json(&values, template.variables())
            .map_err(|error| error.to_string())
            .and_then(|inputs| {
                template.render(&inputs).map_err(|problems| {
                    problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ")
                })
            });
        let (key, request, error) = match rendered {
            Ok(prompt) => {
                match runtime.request(&self.tool, prompt.clone(), ParamOverrides::default()) {
                    Ok(request) => {
                        let parameters = serde_json::to_string(&request.params).unwrap_or_default();
                        let target = format!(
                            "{}/{}",
                            request.target.endpoint.provider, request.target.model
                        );
                        (
                            row_key(tool_hash, &prompt, &format!("{target} {parameters}")),
                            Some(request),
                            None,
                        )
                    }
                    Err(error) => (
                        row_key(tool_hash, &prompt, ""),
                        None,
                        Some(runtime.redact(&error.to_string()).into_owned()),
                    ),
                }
            }
            // Nothing to send: keyed by the row's values instead of a prompt.
            Err(problem) => {
                (row_key(tool_hash, &values.to_string(), "invalid"), None, Some(problem))
            }
        };
        match journal.outcome(&key).await?.as_deref() {
            Some("failed") if self.retry_failed => {}
            Some(_) => {
                skipped.fetch_add(1, Ordering::Relaxed);
                return Ok(None);
            }
            None => {}
        }
        let outcome = if request.is_some() { "failed" } else { "invalid" };
        let record = OutputRecord {
            id: row.id.clone(),
            row: row.index,
            outcome: outcome.to_owned(),
            output: None,
            error,
            provider: request.as_ref().map(|r| r.target.endpoint.provider.clone()),
            model: request.as_ref().map(|r| r.target.model.clone()),
            input_tokens: None,
            output_tokens: None,
            cost_usd: None,
            latency_ms: None,
            key: key.clone(),
        };
        let entry = Entry {
            key,
            row_index: row.index,
            row_id: row.id,
            outcome: outcome.to_owned(),
            cost_usd: None,
            record: record.line(format),
        };
        Ok(Some(Prepared { entry, record, request }))
    }
}

/// Holds `OUT.journal.lock` for as long as it lives, so that two batches never write one
/// output at once. The operating system lets go of it when the process ends, however it
/// ends.
fn lock(journal: &Path) -> std::io::Result<std::fs::File> {
    let mut name = journal.to_path_buf().into_os_string();
    name.push(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(PathBuf::from(name))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(std::io::Error::other(
            "another batch is writing this output now; wait for it to end",
        )),
        Err(std::fs::TryLockError::Error(error)) => Err(error),
    }
}

/// The cost limit of a run, and what has been spent.
struct Budget {
    limit: Option<f64>,
    /// By earlier runs of the batch (the journal's rows).
    spent_before: f64,
    /// By this run, in billionths of a dollar.
    spent: AtomicU64,
    /// Rows not started because the limit was reached.
    left: AtomicU64,
}

impl Budget {
    fn reached(&self) -> bool {
        let spent = self.spent_before + self.spent.load(Ordering::Relaxed) as f64 / 1e9;
        self.limit.is_some_and(|limit| spent >= limit)
    }

    fn add(&self, cost: Option<f64>) {
        let nanos = (cost.unwrap_or(0.0).max(0.0) * 1e9).round() as u64;
        self.spent.fetch_add(nanos, Ordering::Relaxed);
    }
}

/// Runs a prepared row (unless it is invalid): its journal entry and cost; `None` when the
/// budget is reached (the row stays to do).
async fn finish(
    prepared: Prepared,
    runtime: &Runtime,
    format: OutputFormat,
    budget: &Budget,
) -> Option<(Entry, Option<f64>)> {
    let Prepared { mut entry, mut record, request } = prepared;
    let Some(request) = request else { return Some((entry, None)) };
    if budget.reached() {
        budget.left.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    let options = RunOptions { stream: false, max_repairs: 2, raw: false, live: false };
    match runtime.run(&request, options, &mut |_| {}).await {
        Ok(report) => {
            let accepted = Rejected::check(&report).is_ok();
            if accepted { "ok" } else { "rejected" }.clone_into(&mut record.outcome);
            record.output = report.output;
            record.error = report.error;
            record.input_tokens = report.usage.input_tokens;
            record.output_tokens = report.usage.output_tokens;
            record.cost_usd = report.cost;
            record.latency_ms = Some(report.latency_ms);
        }
        Err(error) => {
            "failed".clone_into(&mut record.outcome);
            record.error = Some(runtime.redact(&error.to_string()).into_owned());
        }
    }
    entry.outcome.clone_from(&record.outcome);
    entry.cost_usd = record.cost_usd;
    entry.record = record.line(format);
    budget.add(record.cost_usd);
    Some((entry, record.cost_usd))
}

/// Writes the output again from the journal, in row order (a new file, then renamed over the
/// old), and commits its length.
async fn rewrite(out: &Path, format: OutputFormat, journal: &Journal) -> Result<(), BatchError> {
    let output_error = |source| BatchError::Output { path: out.display().to_string(), source };
    let mut temporary = out.to_path_buf().into_os_string();
    temporary.push(".rewrite");
    let temporary = PathBuf::from(temporary);
    let _ = std::fs::remove_file(&temporary);
    let mut file = OutputFile::open(&temporary, 0).map_err(output_error)?;
    file.append(&format.header()).map_err(output_error)?;
    let mut after = 0;
    loop {
        let page = journal.records_after(after, 1000).await?;
        let Some(&(last, _)) = page.last() else { break };
        for (_, record) in &page {
            file.append(record).map_err(output_error)?;
        }
        after = last;
    }
    let length = file.sync().map_err(output_error)?;
    std::fs::rename(&temporary, out).map_err(output_error)?;
    journal.commit(&[], length).await?;
    Ok(())
}
