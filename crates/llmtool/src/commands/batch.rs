//! `llmtool batch`: a tool run over a dataset (see `llmtool-batch`), with a summary at the end.

mod args;

pub(crate) use args::{BatchAction, BatchArgs};

use anyhow::Context as _;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use llmtool_batch::{Batch, Mapping, Progress, ProviderBatchOptions, RowReader, Via};
use llmtool_providers::run::CHARACTERS_PER_TOKEN;
use llmtool_providers::transport::RetryPolicy;
use llmtool_runtime::{Fetch, LogPolicy, Runtime, RuntimeOptions};

use crate::commands::render::load_tool;
use crate::commands::{batch_status, cost};
use crate::outcome::Outcome;
use crate::{io, settings};

/// How many times a row is sent again after a 429 before it counts as failed. The pace
/// slows every row down after one, so a row rarely needs more than a few.
const RATE_LIMIT_RETRIES: u32 = 10;

pub(crate) fn run(args: &BatchArgs) -> anyhow::Result<Outcome> {
    if let Some(action) = &args.action {
        return batch_status::run(action);
    }
    // Required by the command line when there is no subcommand.
    let (Some(tool_path), Some(data), Some(out)) = (&args.tool, &args.data, &args.out) else {
        anyhow::bail!("llmtool batch needs TOOL, DATA and -o OUT (see llmtool batch --help)");
    };
    let name = io::display_name(tool_path);
    let Some((document, _)) = load_tool(tool_path, &name)? else {
        return Ok(Outcome::Problems);
    };
    let tool = document.tool.clone().context("a checked tool has a model")?;
    let mut pairs = Vec::new();
    for pair in &args.map {
        let (variable, column) =
            pair.split_once('=').with_context(|| format!("`--map {pair}`: write VAR=COLUMN"))?;
        pairs.push((variable.trim().to_owned(), column.trim().to_owned()));
    }
    let providers = settings::load_providers(args.target.setup.config.as_deref())?;
    let defaults = settings::runtime_options(&args.target);
    let options = RuntimeOptions {
        // A batch never stops to ask: a missing local model is an error (`llmtool model pull`).
        fetch: Fetch::Never,
        // Each row's run is logged with every other run, so that `usage` counts its spending.
        log: LogPolicy::from_env(args.no_log_values),
        // The rows at once are the most requests at once; a 429 makes them fewer for a
        // while, and the row waits and tries again rather than failing.
        concurrency: u32::try_from(args.jobs).ok().and_then(NonZeroU32::new),
        retry: RetryPolicy { max_rate_limit_retries: RATE_LIMIT_RETRIES, ..defaults.retry },
        // A batch of your own smart tool is asking for its code to run (in the sandbox).
        smart: Some(llmtool_runtime::smart::Limits::default()),
        // An image tool's pictures come back to the batch, which saves each row's.
        pictures: llmtool_runtime::pictures::Pictures::Returned,
        ..defaults
    };
    let mut runtime = Runtime::new(providers.clone(), options.clone())?;
    if args.estimate {
        runtime = settings::with_stand_in_key(runtime, &tool, providers, options)?;
    }
    let via = match args.via {
        args::Via::Here => Via::Here,
        args::Via::ProviderBatch => {
            if tool.kind() == llmtool_format::model::ToolKind::Smart {
                anyhow::bail!(
                    "{name} is a smart tool: its code runs here, in the sandbox; `--via provider-batch` sends prompts to a provider's batch engine"
                );
            }
            if !(args.poll.is_finite() && args.poll > 0.0) {
                anyhow::bail!("--poll takes a number of seconds above 0");
            }
            let first_poll = Duration::from_secs_f64(args.poll.min(3600.0));
            Via::ProviderBatch(ProviderBatchOptions {
                rows_per_batch: args.rows_per_batch.max(1),
                first_poll,
                longest_poll: Duration::from_mins(5).max(first_poll),
                detach: args.detach,
            })
        }
    };
    let batch = Batch {
        tool,
        tool_path: Some(name.clone()),
        data: data.clone(),
        out: out.clone(),
        mapping: Mapping { pairs, documents: args.documents.then(|| dataset_folder(data)) },
        id_column: args.id.clone(),
        concurrency: args.jobs.max(1),
        retry_failed: args.retry_failed,
        keep_order: args.keep_order,
        max_cost: args.max_cost,
        max_row_bytes: crate::io::max_file_bytes(),
        via,
        pictures: args.pictures.clone().unwrap_or_else(|| pictures_beside(out)),
    };
    if args.estimate {
        let estimate = batch.estimate(&runtime)?;
        let mut line = format!(
            "estimate: {} row(s) ({} invalid, not sent); about {} input tokens ({CHARACTERS_PER_TOKEN} characters a token); worst case {}",
            estimate.rows,
            estimate.invalid,
            cost::thousands(estimate.input_tokens),
            cost::dollars(estimate.worst_cost)
        );
        if estimate.unbounded_rows > 0 {
            line += &format!(
                ", plus {} row(s) with no worst case (an unpriced model, or no output limit known)",
                estimate.unbounded_rows
            );
        }
        eprintln!("{line}");
        return Ok(Outcome::Ok);
    }
    let threads = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let progress = Progress::default();
    let finished = AtomicBool::new(false);
    let summary = std::thread::scope(|scope| {
        scope.spawn(|| show_progress(&batch, &progress, &finished));
        let summary = threads.block_on(batch.run(&runtime, &progress));
        finished.store(true, Ordering::Relaxed);
        summary
    })?;
    if summary.setup_changed {
        eprintln!(
            "the tool or its model changed since {} was written: its rows ran again",
            out.display()
        );
    }
    if summary.dropped > 0 {
        eprintln!(
            "{} earlier record(s) dropped from {}: rows no longer in the dataset, or made with another tool or model",
            summary.dropped,
            out.display()
        );
    }
    if summary.left_at_budget > 0 {
        eprintln!(
            "stopped at the budget (--max-cost): {} row(s) left to do; rerun with a higher --max-cost to go on",
            summary.left_at_budget
        );
    }
    if !summary.provider_batches.is_empty() {
        eprintln!(
            "{} row(s) sent to the provider's batch engine in {}",
            summary.submitted,
            summary.provider_batches.join(", ")
        );
    }
    if summary.awaiting > 0 {
        eprintln!(
            "{} row(s) wait for the provider's answers (llmtool batch status {}); run the same command again to collect them",
            summary.awaiting,
            out.display()
        );
    }
    eprintln!(
        "{} row(s) run: {} ok, {} rejected, {} failed, {} invalid; {} already done; {} spent. Results: {}",
        summary.rows,
        summary.ok,
        summary.rejected,
        summary.failed,
        summary.invalid,
        summary.skipped,
        cost::dollars(summary.cost_usd),
        out.display()
    );
    crate::commands::logs::say_runs_not_logged(&runtime);
    let incomplete = summary.failed + summary.rejected + summary.invalid + summary.left_at_budget;
    Ok(if incomplete > 0 { Outcome::Problems } else { Outcome::Ok })
}

/// A progress bar on standard error (drawn only on a terminal) until `finished`: rows done
/// of all the rows, failures, rate, time left and cost so far. The rows are counted on the
/// side, so the bar has its length a moment after the batch starts (a spinner for standard
/// input, which cannot be read twice).
fn show_progress(batch: &Batch, progress: &Progress, finished: &AtomicBool) {
    let target = ProgressDrawTarget::stderr_with_hz(4);
    if target.is_hidden() {
        return;
    }
    let bar = ProgressBar::with_draw_target(None, target);
    let style = |template: &str| {
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
    };
    bar.set_style(style("{spinner} {elapsed_precise} {pos} rows ({per_sec}) {msg}"));
    let total = std::sync::OnceLock::new();
    std::thread::scope(|scope| {
        if batch.data.as_os_str() != "-" {
            scope.spawn(|| {
                if let Ok(rows) = RowReader::open(&batch.data, None) {
                    let rows = rows.with_row_limit(batch.max_row_bytes);
                    let counted = rows
                        .take_while(|row| row.is_ok() && !finished.load(Ordering::Relaxed))
                        .count();
                    let _ = total.set(counted as u64);
                }
            });
        }
        let mut sized = false;
        while !finished.load(Ordering::Relaxed) {
            if !sized && let Some(&length) = total.get() {
                bar.set_length(length);
                bar.set_style(style(
                    "{elapsed_precise} [{wide_bar}] {pos}/{len} rows ({per_sec}, {eta} left) {msg}",
                ));
                sized = true;
            }
            let done = progress.done.load(Ordering::Relaxed);
            let skipped = progress.skipped.load(Ordering::Relaxed);
            bar.set_position(done + skipped);
            let waiting = progress
                .waiting
                .lock()
                .ok()
                .and_then(|note| note.clone())
                .map(|note| format!("; {note}"))
                .unwrap_or_default();
            bar.set_message(format!(
                "{} not ok, {} already done, {} spent{waiting}",
                progress.not_ok.load(Ordering::Relaxed),
                skipped,
                cost::dollars(progress.cost_usd())
            ));
            std::thread::sleep(Duration::from_millis(100));
        }
        bar.finish_and_clear();
    });
}

/// The folder a dataset's `@FILE` cells are relative to: the dataset's own (the current one
/// for standard input).
fn dataset_folder(data: &std::path::Path) -> std::path::PathBuf {
    match data.parent() {
        Some(parent) if !parent.as_os_str().is_empty() && data != std::path::Path::new("-") => {
            parent.to_path_buf()
        }
        _ => std::path::PathBuf::from("."),
    }
}

/// Where an image tool's pictures go by default: `OUT-pictures` beside the output (`-` for
/// standard output: `pictures` in the current folder).
fn pictures_beside(out: &std::path::Path) -> std::path::PathBuf {
    match out.file_stem() {
        Some(stem) if out.as_os_str() != "-" => {
            let mut name = stem.to_os_string();
            name.push("-pictures");
            out.with_file_name(name)
        }
        _ => std::path::PathBuf::from("pictures"),
    }
}
