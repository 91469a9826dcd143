//! Running a batch: the rows streamed from the dataset, each made into a prompt, skipped when
//! the journal has it, run `concurrency` at a time through the shared run path, and written in
//! groups: appended to the output, synced, then committed to the journal with the output's
//! new length.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::StreamExt as _;
use llmtool_format::model::Tool;
use llmtool_format::template::{Inputs, ToolTemplate};
use llmtool_providers::run::{RunOptions, RunReport};
use llmtool_runtime::worst_case::{self, Sending};
use llmtool_runtime::{ParamOverrides, Runtime, SmartRun, ToKeep};

use crate::input::{InputError, Mapping, RowReader};
use crate::journal::{Entry, Journal, JournalError, Met};
use crate::keys::Occurrences;
use crate::output::{OutputFile, OutputFormat};
use crate::parquet::ParquetOutput;
use crate::prepare::{Shaped, Shaper};

/// How many finished rows are written and committed together at most.
const GROUP: usize = 64;

/// How many rows are looked up in the journal with one query.
pub(crate) const LOOKUP: usize = 512;

/// How many rows met again (done by an earlier run) wait to be stamped in one commit.
pub(crate) const MET_GROUP: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("the output {path}: {source}")]
    Output { path: String, source: std::io::Error },
    #[error("{0}: name the output .jsonl, .csv or .parquet")]
    OutputFormat(String),
    #[error(transparent)]
    Provider(#[from] llmtool_providers::ProviderError),
    #[error(transparent)]
    Run(#[from] llmtool_runtime::RunError),
}

/// A batch: the tool, the dataset, the output, and how to run.
#[derive(Debug, Clone)]
pub struct Batch {
    pub tool: Tool,
    /// The tool file's name as the user gave it: the run log keeps each row's run with it.
    pub tool_path: Option<String>,
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
    /// The most bytes one row may have (the tool-file size limit): a longer one is `invalid`,
    /// read past and never sent, so that a huge cell costs memory up to this and no more.
    pub max_row_bytes: u64,
    pub via: Via,
    /// Where an image tool's pictures go: `row-ROW-1.png` for each row (see
    /// [`llmtool_runtime::pictures::save_into`]); the row's output is their paths. The
    /// runtime hands the pictures back ([`llmtool_runtime::pictures::Pictures::Returned`]).
    pub pictures: PathBuf,
}

/// Where the rows run.
#[derive(Debug, Clone, Default)]
pub enum Via {
    /// Here: each row a request of its own, `concurrency` at a time.
    #[default]
    Here,
    /// Through the provider's own batch engine, at its batch price.
    ProviderBatch(ProviderBatchOptions),
}

/// How a batch goes through the provider's batch engine.
#[derive(Debug, Clone)]
pub struct ProviderBatchOptions {
    /// The most rows in one provider batch (the provider's own limit may be lower).
    pub rows_per_batch: usize,
    /// The wait before the first poll; it doubles each poll up to `longest_poll`.
    pub first_poll: std::time::Duration,
    pub longest_poll: std::time::Duration,
    /// Submit the rows and return without waiting for their answers (a later run collects
    /// them).
    pub detach: bool,
}

impl Default for ProviderBatchOptions {
    fn default() -> Self {
        Self {
            rows_per_batch: 10_000,
            first_poll: std::time::Duration::from_secs(5),
            longest_poll: std::time::Duration::from_mins(5),
            detach: false,
        }
    }
}

/// A run's dataset, journal and output, opened; and what it starts from.
pub(crate) struct Opened<'a> {
    pub format: OutputFormat,
    pub rows: RowReader,
    pub journal: Journal,
    /// Held for the run (see [`lock`]).
    pub _lock: std::fs::File,
    pub output: OutputFile,
    pub shaper: Shaper<'a>,
    pub start: crate::journal::Start,
    pub summary: Summary,
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
    /// The tool or model is not what the journal's rows were run with.
    pub setup_changed: bool,
    /// Records dropped from the output: rows no longer in the dataset, or made with another
    /// tool or model.
    pub dropped: u64,
    /// Rows this run handed to the provider's batch engine, and the batches they went in.
    pub submitted: u64,
    pub provider_batches: Vec<String>,
    /// Rows in the provider's batches whose answers are not collected yet.
    pub awaiting: u64,
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

/// How far a run is, for a progress display: read while it runs.
#[derive(Debug, Default)]
pub struct Progress {
    /// Rows run (or written as invalid) by this run.
    pub done: AtomicU64,
    /// Of those, the rows not `ok`.
    pub not_ok: AtomicU64,
    /// Rows the journal had done.
    pub skipped: AtomicU64,
    /// US dollars spent by this run, in billionths.
    pub cost_nanos: AtomicU64,
    /// What the run waits on, when it waits (the provider's batches).
    pub waiting: std::sync::Mutex<Option<String>>,
}

impl Progress {
    pub fn cost_usd(&self) -> f64 {
        self.cost_nanos.load(Ordering::Relaxed) as f64 / 1e9
    }
}

/// A row through the run: done by an earlier run (met again), run now (with its run's record
/// for the run log, when it has one), or left to do at the budget.
enum Finished {
    Met(Met),
    Ran(Entry, Option<Box<ToKeep>>),
    Left,
}

impl Batch {
    /// The journal's path: the output's, with `.journal` added.
    pub fn journal_path(&self) -> PathBuf {
        let mut name = self.out.clone().into_os_string();
        name.push(".journal");
        PathBuf::from(name)
    }

    /// Runs every row not done yet, counting in `progress` as it goes: here, or through the
    /// provider's batch engine.
    pub async fn run(&self, runtime: &Runtime, progress: &Progress) -> Result<Summary, BatchError> {
        let opened = self.open(runtime).await?;
        match &self.via {
            Via::Here => self.run_here(runtime, progress, opened).await,
            Via::ProviderBatch(options) => {
                crate::provider_batch::run(self, runtime, progress, opened, options).await
            }
        }
    }

    /// The dataset, the journal and the output, made ready for a run.
    pub(crate) async fn open<'a>(&'a self, runtime: &'a Runtime) -> Result<Opened<'a>, BatchError> {
        let format = OutputFormat::of(&self.out)
            .ok_or_else(|| BatchError::OutputFormat(self.out.display().to_string()))?;
        // The dataset first: a mistyped path leaves no output or journal behind.
        let rows =
            RowReader::open(&self.data, self.id_column.clone())?.with_row_limit(self.max_row_bytes);
        let journal_path = self.journal_path();
        let new_journal = !journal_path.exists();
        if new_journal && std::fs::metadata(&self.out).is_ok_and(|m| m.len() > 0) {
            // Not this batch's output: cutting it back to nothing would lose it.
            return Err(self.output_error(std::io::Error::other(format!(
                "{} exists and no journal says what is in it; choose another output, or move it away",
                self.out.display()
            ))));
        }
        let lock = lock(&journal_path).map_err(|e| self.output_error(e))?;
        let journal = Journal::open(&journal_path).await?;
        if journal.rewrite_pending().await? {
            // An earlier run replaced records and stopped before writing the output again.
            rewrite(&self.out, format, &journal).await?;
        }
        let mut committed = journal.committed_bytes().await?;
        let mut output = match format {
            OutputFormat::Parquet => OutputFile::detached(),
            _ => OutputFile::open(&self.out, committed).map_err(|e| self.output_error(e))?,
        };
        if committed == 0 {
            output.append(&format.header()).map_err(|e| self.output_error(e))?;
            committed = output.sync().map_err(|e| self.output_error(e))?;
            journal.commit(&[], &[], 0, committed).await?;
        }
        let shaper = Shaper {
            tool: &self.tool,
            tool_path: self.tool_path.as_deref(),
            template: ToolTemplate::new(&self.tool),
            tool_hash: llmtool_runtime::log::tool_hash(&self.tool),
            mapping: &self.mapping,
            runtime,
            format,
            occurrences: Occurrences::default(),
        };
        let start = journal.start(&shaper.setup()).await?;
        let summary = Summary { setup_changed: start.setup_changed, ..Summary::default() };
        Ok(Opened { format, rows, journal, _lock: lock, output, shaper, start, summary })
    }

    pub(crate) fn output_error(&self, source: std::io::Error) -> BatchError {
        BatchError::Output { path: self.out.display().to_string(), source }
    }

    /// Runs the rows here, `concurrency` at a time.
    async fn run_here(
        &self,
        runtime: &Runtime,
        progress: &Progress,
        opened: Opened<'_>,
    ) -> Result<Summary, BatchError> {
        let Opened { format, rows, journal, _lock, mut output, mut shaper, start, mut summary } =
            opened;
        let output_error = |source| self.output_error(source);
        let budget = Budget { limit: self.max_cost, spent_before: journal.cost().await?, progress };
        let (budget, journal_ref) = (&budget, &journal);
        let concurrency = self.concurrency.max(1);
        let results =
            futures_util::stream::iter(rows.map(move |row| row.map(|row| shaper.shape(row))))
                .ready_chunks(LOOKUP)
                .map(|rows| look_up(journal_ref, rows))
                .buffered(2)
                .flat_map(futures_util::stream::iter)
                .map(|looked_up| async move {
                    let (mut row, done) = looked_up?;
                    match done.as_deref() {
                        Some("failed") if self.retry_failed => row.entry.replaces = true,
                        Some(_) => {
                            let Entry { key, row_index, .. } = row.entry;
                            return Ok(Finished::Met(Met { key, row_index }));
                        }
                        None => {}
                    }
                    Ok(finish(row, (&self.tool, runtime), (format, &self.pictures), budget).await)
                })
                .buffer_unordered(concurrency)
                .ready_chunks(GROUP);
        let mut results = std::pin::pin!(results);
        let mut met = Vec::new();
        let mut stopped = None;
        while let Some(group) = results.next().await {
            let mut entries = Vec::with_capacity(group.len());
            let mut runs = Vec::with_capacity(group.len());
            for result in group {
                match result {
                    Ok(Finished::Ran(entry, run)) => {
                        output.append(&entry.record).map_err(output_error)?;
                        summary.count(&entry);
                        entries.push(entry);
                        runs.extend(run.map(|run| *run));
                    }
                    Ok(Finished::Met(row)) => {
                        summary.skipped += 1;
                        progress.skipped.fetch_add(1, Ordering::Relaxed);
                        met.push(row);
                    }
                    Ok(Finished::Left) => summary.left_at_budget += 1,
                    // Rows finished with it are still written; the rest run again next time.
                    Err(error) => stopped = stopped.or(Some(error)),
                }
            }
            if !entries.is_empty() || met.len() >= MET_GROUP {
                let length = output.sync().map_err(output_error)?;
                journal.commit(&entries, &met, start.pass, length).await?;
                met.clear();
            }
            // The group's runs go to the run log together, once the journal has them: a run
            // stopped before then runs them again, and must not log them twice.
            runtime.keep_all(runs).await;
            if stopped.is_some() {
                break;
            }
        }
        let length = output.sync().map_err(output_error)?;
        journal.commit(&[], &met, start.pass, length).await?;
        if let Some(error) = stopped {
            if format == OutputFormat::Parquet {
                // The rows done so far still reach the output; the error that stopped the run
                // is the one to report, so a failure to write here only waits for the next run.
                let _ = rewrite(&self.out, format, &journal).await;
            }
            return Err(error);
        }
        let every_row_met = summary.left_at_budget == 0;
        self.close(&journal, format, start.pass, every_row_met, &mut summary).await?;
        Ok(summary)
    }

    /// Ends a run: when it met every row of the dataset, drops the journal's rows it did not
    /// meet; writes the output again when it must be.
    pub(crate) async fn close(
        &self,
        journal: &Journal,
        format: OutputFormat,
        pass: i64,
        every_row_met: bool,
        summary: &mut Summary,
    ) -> Result<(), BatchError> {
        if every_row_met {
            // Rows the journal has that were not met are gone from the dataset (or were made
            // with another tool or model).
            summary.dropped = journal.drop_unmet(pass).await?;
        }
        if self.keep_order || format == OutputFormat::Parquet || journal.rewrite_pending().await? {
            rewrite(&self.out, format, journal).await?;
        }
        Ok(())
    }

    /// What the batch would send: rows, input tokens and the worst-case cost; nothing is
    /// sent and nothing is written.
    pub fn estimate(&self, runtime: &Runtime) -> Result<Estimate, BatchError> {
        let template = ToolTemplate::new(&self.tool);
        let mut estimate = Estimate::default();
        for row in
            RowReader::open(&self.data, self.id_column.clone())?.with_row_limit(self.max_row_bytes)
        {
            let row = row?;
            estimate.rows += 1;
            let values = self.mapping.values(&row, template.variables()).ok();
            let prompt = values
                .and_then(|values| Inputs::from_json(&values, template.variables()).ok())
                .and_then(|inputs| template.render(&inputs).ok());
            let request = prompt.filter(|_| row.malformed.is_none()).and_then(|prompt| {
                runtime.request(&self.tool, prompt, ParamOverrides::default()).ok()
            });
            let Some(request) = request else {
                estimate.invalid += 1;
                continue;
            };
            let row_estimate = worst_case::estimate(&request, None, Sending::Run);
            estimate.input_tokens += row_estimate.input_tokens;
            match row_estimate.worst_cost {
                Some(cost) => estimate.worst_cost += cost,
                None => estimate.unbounded_rows += 1,
            }
        }
        Ok(estimate)
    }
}

impl Summary {
    pub(crate) fn count(&mut self, entry: &Entry) {
        self.rows += 1;
        self.cost_usd += entry.cost_usd.unwrap_or(0.0);
        match entry.outcome.as_str() {
            "ok" => self.ok += 1,
            "rejected" => self.rejected += 1,
            "invalid" => self.invalid += 1,
            _ => self.failed += 1,
        }
    }
}

/// `rows`, each with how the journal says it ended (if it is done), in one query.
pub(crate) async fn look_up(
    journal: &Journal,
    rows: Vec<Result<Shaped, InputError>>,
) -> Vec<Result<(Shaped, Option<String>), BatchError>> {
    let keys: Vec<&str> = rows.iter().flatten().map(|row| row.entry.key.as_str()).collect();
    let mut done = match journal.outcomes(&keys).await {
        Ok(done) => done,
        Err(error) => return vec![Err(error.into())],
    };
    rows.into_iter()
        .map(|row| {
            let row = row?;
            let outcome = done.remove(&row.entry.key);
            Ok((row, outcome))
        })
        .collect()
}

/// Holds `OUT.journal.lock` for as long as it lives, so that two batches never write one
/// output at once. The operating system lets go of it when the process ends, however it
/// ends.
fn lock(journal: &Path) -> std::io::Result<std::fs::File> {
    let mut name = journal.to_path_buf().into_os_string();
    name.push(".lock");
    let (file, _) = llmtool_log::private::open_private(
        std::fs::OpenOptions::new().create(true).truncate(false).write(true),
        &PathBuf::from(name),
    )?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(std::io::Error::other(
            "another batch is writing this output now; wait for it to end",
        )),
        Err(std::fs::TryLockError::Error(error)) => Err(error),
    }
}

/// The cost limit of a run, and what has been spent.
struct Budget<'a> {
    limit: Option<f64>,
    /// By earlier runs of the batch (the journal's rows).
    spent_before: f64,
    /// This run's rows and spending.
    progress: &'a Progress,
}

impl Budget<'_> {
    fn reached(&self) -> bool {
        let spent = self.spent_before + self.progress.cost_usd();
        self.limit.is_some_and(|limit| spent >= limit)
    }

    fn add(&self, entry: &Entry) {
        let nanos = (entry.cost_usd.unwrap_or(0.0).max(0.0) * 1e9).round() as u64;
        self.progress.cost_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.progress.done.fetch_add(1, Ordering::Relaxed);
        if entry.outcome != "ok" {
            self.progress.not_ok.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Runs a shaped row (unless it is invalid), or leaves it to do when the budget is reached.
async fn finish(
    shaped: Shaped,
    (tool, runtime): (&Tool, &Runtime),
    (format, pictures): (OutputFormat, &Path),
    budget: &Budget<'_>,
) -> Finished {
    let Shaped { mut entry, mut record, request, smart, subject } = shaped;
    let Some(request) = request else {
        if let Some(variables) = smart {
            if budget.reached() {
                return Finished::Left;
            }
            run_smart_row((tool, runtime), variables, subject.as_ref(), &mut record).await;
            entry.outcome.clone_from(&record.outcome);
            entry.cost_usd = record.cost_usd;
            entry.record = record.line(format);
        }
        budget.add(&entry);
        return Finished::Ran(entry, None);
    };
    if budget.reached() {
        return Finished::Left;
    }
    // The row's record is in the output; its run is in the run log too, with every other run,
    // kept with the rest of its group (`run_here`).
    let (result, run) = runtime
        .execute_later(
            &request,
            RunOptions::WHOLE,
            subject.as_ref(),
            &mut |_| {},
            std::future::pending(),
        )
        .await;
    match result {
        Ok(mut report) => {
            record.latency_ms = Some(report.latency_ms);
            let unsaved = save_row_pictures(pictures, record.row, &mut report).err();
            record.answered(report);
            if let Some(error) = unsaved {
                // Paid for (its cost is kept) but lost: a failure, tried again by
                // `--retry-failed`.
                "failed".clone_into(&mut record.outcome);
                record.output = None;
                record.error = Some(error);
            }
        }
        Err(error) => {
            "failed".clone_into(&mut record.outcome);
            record.error = Some(runtime.redact(&error.to_string()).into_owned());
        }
    }
    entry.outcome.clone_from(&record.outcome);
    entry.cost_usd = record.cost_usd;
    entry.record = record.line(format);
    budget.add(&entry);
    Finished::Ran(entry, run.map(Box::new))
}

/// Saves the pictures of row `row`'s run into `folder`, its output then their paths (a line
/// each); nothing for a run without pictures.
fn save_row_pictures(folder: &Path, row: u64, report: &mut RunReport) -> Result<(), String> {
    if report.pictures.is_empty() {
        return Ok(());
    }
    let stem = format!("row-{row}");
    let saved = llmtool_runtime::pictures::save_into(folder, &stem, &report.pictures)
        .map_err(|error| format!("cannot save the pictures in `{}`: {error}", folder.display()))?;
    let paths: Vec<&str> = saved.iter().filter_map(|image| image.path.as_deref()).collect();
    report.output = Some(paths.join("\n"));
    report.images = saved;
    Ok(())
}

/// Runs a smart tool's row in the sandbox and fills in its record. The smart run and its
/// `llm()` calls are kept in the run log as they end (not with the group's runs).
async fn run_smart_row(
    (tool, runtime): (&Tool, &Runtime),
    variables: serde_json::Map<String, serde_json::Value>,
    subject: Option<&llmtool_runtime::Subject>,
    record: &mut crate::output::OutputRecord,
) {
    // A tool read from a file has its requirements' lock beside it.
    let lock = llmtool_runtime::site::lock_of(subject.and_then(|s| s.tool_path.as_deref()));
    let run = SmartRun { variables, scratch: true, lock, ..SmartRun::default() };
    match runtime.run_smart(tool, run, subject, std::future::pending()).await {
        Ok(finished) => {
            record.latency_ms = u64::try_from(finished.ran.wall.as_millis()).ok();
            record.cost_usd = finished.cost();
            let tokens = |pick: fn(&llmtool_runtime::ModelCall) -> Option<u64>| {
                finished.calls.iter().filter_map(pick).reduce(|a, b| a + b)
            };
            record.input_tokens = tokens(|c| c.input_tokens);
            record.output_tokens = tokens(|c| c.output_tokens);
            match &finished.ran.result {
                Ok(result) => {
                    "ok".clone_into(&mut record.outcome);
                    record.output = Some(result.clone());
                }
                Err(failure) => {
                    record.error = Some(runtime.redact(&failure.to_string()).into_owned())
                }
            }
        }
        Err(error) => record.error = Some(runtime.redact(&error.to_string()).into_owned()),
    }
}

/// Writes the output again from the journal, in row order (a new file, then renamed over the
/// old), and commits its length.
async fn rewrite(out: &Path, format: OutputFormat, journal: &Journal) -> Result<(), BatchError> {
    let output_error = |source| BatchError::Output { path: out.display().to_string(), source };
    let mut temporary = out.to_path_buf().into_os_string();
    temporary.push(".rewrite");
    let temporary = PathBuf::from(temporary);
    let _ = std::fs::remove_file(&temporary);
    let mut file = match format {
        OutputFormat::Parquet => Rewritten::Parquet(Box::new(
            ParquetOutput::create(&temporary)
                .map_err(|detail| output_error(std::io::Error::other(detail)))?,
        )),
        _ => {
            let mut file = OutputFile::open(&temporary, 0).map_err(output_error)?;
            file.append(&format.header()).map_err(output_error)?;
            Rewritten::Lines(file)
        }
    };
    let mut after = None;
    loop {
        let page = journal.records_after(after.as_ref(), 1000).await?;
        let Some((last, _)) = page.last() else { break };
        let last = last.clone();
        match &mut file {
            Rewritten::Lines(file) => {
                for (_, record) in &page {
                    file.append(record).map_err(output_error)?;
                }
            }
            Rewritten::Parquet(parquet) => {
                let records: Vec<String> = page.into_iter().map(|(_, record)| record).collect();
                parquet
                    .write(&records)
                    .map_err(|detail| output_error(std::io::Error::other(detail)))?;
            }
        }
        after = Some(last);
    }
    let length = match file {
        Rewritten::Lines(mut file) => file.sync().map_err(output_error)?,
        Rewritten::Parquet(parquet) => {
            parquet.finish().map_err(|detail| output_error(std::io::Error::other(detail)))?;
            // Nothing of a Parquet output is appended to: its journal length stays 0.
            0
        }
    };
    std::fs::rename(&temporary, out).map_err(output_error)?;
    sync_directory(out).map_err(output_error)?;
    journal.rewritten(length).await?;
    Ok(())
}

/// Makes the rename of `path` durable (fsync of its directory), so a power loss cannot leave
/// the old file beside a journal that already counts the new one.
fn sync_directory(path: &Path) -> std::io::Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::File::open(directory)?.sync_all()
}

/// The output being written again.
enum Rewritten {
    Lines(OutputFile),
    Parquet(Box<ParquetOutput>),
}
