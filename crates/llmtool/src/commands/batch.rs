//! `llmtool batch`: a tool run over a dataset (see `llmtool-batch`), with a summary at the end.

use anyhow::Context as _;
use llmtool_batch::{Batch, Mapping};
use llmtool_providers::run::CHARACTERS_PER_TOKEN;
use llmtool_runtime::{Fetch, LogPolicy, Runtime, RuntimeOptions};

use crate::Outcome;
use crate::cli::BatchArgs;
use crate::commands::cost;
use crate::commands::render::load_tool;
use crate::{io, settings};

pub(crate) fn run(args: &BatchArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.tool);
    let Some((document, _)) = load_tool(&args.tool, &name)? else {
        return Ok(Outcome::Problems);
    };
    let tool = document.tool.clone().context("a checked tool has a model")?;
    let mut pairs = Vec::new();
    for pair in &args.map {
        let (variable, column) =
            pair.split_once('=').with_context(|| format!("`--map {pair}`: write VAR=COLUMN"))?;
        pairs.push((variable.trim().to_owned(), column.trim().to_owned()));
    }
    let providers = settings::load_providers(args.target.config.as_deref())?;
    let options = RuntimeOptions {
        // A batch never stops to ask: a missing local model is an error (`llmtool model pull`).
        fetch: Fetch::Never,
        // Each row's record is in OUT; the run log would double every row's values.
        log: LogPolicy::Off,
        ..settings::runtime_options(&args.target)
    };
    let runtime = Runtime::new(providers, options)?;
    let batch = Batch {
        tool,
        data: args.data.clone(),
        out: args.out.clone(),
        mapping: Mapping { pairs },
        id_column: args.id.clone(),
        concurrency: args.jobs.max(1),
        retry_failed: args.retry_failed,
        keep_order: args.keep_order,
        max_cost: args.max_cost,
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
    let summary = threads.block_on(batch.run(&runtime))?;
    if summary.left_at_budget > 0 {
        eprintln!(
            "stopped at the budget (--max-cost): {} row(s) left to do; rerun with a higher --max-cost to go on",
            summary.left_at_budget
        );
    }
    eprintln!(
        "{} row(s) run: {} ok, {} rejected, {} failed, {} invalid; {} already done; ${:.6} spent. Results: {}",
        summary.rows,
        summary.ok,
        summary.rejected,
        summary.failed,
        summary.invalid,
        summary.skipped,
        summary.cost_usd,
        args.out.display()
    );
    let incomplete = summary.failed + summary.rejected + summary.invalid + summary.left_at_budget;
    Ok(if incomplete > 0 { Outcome::Problems } else { Outcome::Ok })
}
