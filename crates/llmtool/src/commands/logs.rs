//! `llmtool logs` and `llmtool usage`: the recent runs of the run log, and their totals.

mod args;
mod transcript;

pub(crate) use args::{LogsAction, LogsArgs, LogsFormat, UsageArgs, UsageBy};

use std::fmt::Write as _;

use anyhow::Context as _;
use comfy_table::{ContentArrangement, Table, presets};
use llmtool_log::{Filter, Grouping, Record, RunLog, Total};

use crate::cli::ReportFormat;
use crate::commands::cost::{dollars, thousands};
use crate::io;
use crate::outcome::Outcome;

/// The widest bar of the chart of cost per day.
const BAR_WIDTH: usize = 30;

/// Says once, on standard error, how many of the runs of `runtime` the run log did not keep
/// and why: what a command that runs many (a batch, a test suite) ends with.
pub(crate) fn say_runs_not_logged(runtime: &llmtool_runtime::Runtime) {
    if let Some((count, why)) = runtime.runs_not_kept() {
        eprintln!("warning: {count} run(s) not logged: {why}");
    }
}

pub(crate) fn logs(args: &LogsArgs) -> anyhow::Result<Outcome> {
    if let Some(LogsAction::Show { id, format }) = &args.action {
        return show(id, *format);
    }
    if let Some(cid) = &args.cid {
        let kept = crate::commands::reply::find(Some(cid))?;
        io::write_stdout(transcript::transcript(&kept, args.format).as_bytes())?;
        return Ok(Outcome::Ok);
    }
    if args.format == LogsFormat::Markdown {
        anyhow::bail!("`--format markdown` prints a conversation: give its `--cid ID`");
    }
    if args.conversations {
        let limit = args.count;
        let listed = with_log(|log| async move { log.conversations(None, limit).await })?;
        let text = transcript::list(&listed.unwrap_or_default(), args.format);
        io::write_stdout(text.as_bytes())?;
        return Ok(Outcome::Ok);
    }
    let since = args.since.as_deref().map(since).transpose()?;
    let filter = Filter {
        limit: args.count,
        tool: args.tool.clone(),
        model: args.model.clone(),
        since,
        origin: args.origin.clone(),
    };
    let runs = with_log(|log| async move { log.recent(&filter).await })?.unwrap_or_default();
    let text = match args.format {
        LogsFormat::Json => serde_json::to_string_pretty(&runs)? + "\n",
        _ if runs.is_empty() => "no runs logged\n".to_owned(),
        _ => runs.iter().map(shown).collect::<Vec<_>>().join("\n"),
    };
    io::write_stdout(text.as_bytes())?;
    Ok(Outcome::Ok)
}

pub(crate) fn usage(args: &UsageArgs) -> anyhow::Result<Outcome> {
    let since = args.since.as_deref().map(since).transpose()?;
    let (totals, days) = if args.library {
        library_totals(args, since.as_deref())?
    } else {
        let by = match args.by {
            UsageBy::Tool => Grouping::Tool,
            UsageBy::Model => Grouping::Model,
            UsageBy::Day => Grouping::Day,
            UsageBy::Origin => Grouping::Origin,
        };
        with_log(|log| async move {
            let totals = log.totals(by, since.as_deref()).await?;
            let days = log.totals(Grouping::Day, since.as_deref()).await?;
            Ok((totals, days))
        })?
        .unwrap_or_default()
    };
    let text = match args.format {
        ReportFormat::Json => {
            serde_json::to_string_pretty(&serde_json::json!({ "by": args.by, "totals": totals }))?
                + "\n"
        }
        ReportFormat::Text if totals.is_empty() => "no runs logged\n".to_owned(),
        ReportFormat::Text => table(&totals, args.by) + "\n\n" + &chart(&days),
    };
    io::write_stdout(text.as_bytes())?;
    Ok(Outcome::Ok)
}

/// The totals of the runs the tool library kept, by `args.by` and by day (`GET /usage`).
fn library_totals(
    args: &UsageArgs,
    since: Option<&str>,
) -> anyhow::Result<(Vec<Total>, Vec<Total>)> {
    let client = crate::registry::client(args.registry.registry.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime
        .block_on(async {
            let totals = client.usage(args.by.name(), since).await?;
            let days = client.usage(UsageBy::Day.name(), since).await?;
            Ok((totals, days))
        })
        .map_err(|error| crate::registry::explained(error, &client, "viewer"))
}

/// Runs `query` on the log in the data directory; `None` when there is no log yet.
pub(crate) fn with_log<T, F, Fut>(query: F) -> anyhow::Result<Option<T>>
where
    F: FnOnce(RunLog) -> Fut,
    Fut: std::future::Future<Output = Result<T, llmtool_log::LogError>>,
{
    let dir = llmtool_log::data_dir()
        .context("cannot tell where the run log is: set HOME, XDG_DATA_HOME or LLMTOOL_DATA_DIR")?;
    let path = dir.join(llmtool_log::DATABASE_FILE);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        match RunLog::open_existing(&path).await? {
            Some(log) => Ok(Some(query(log).await?)),
            None => Ok(None),
        }
    })
}

/// `--since`, as every reader of the log takes it (`llmtool_log::since`).
fn since(text: &str) -> anyhow::Result<String> {
    llmtool_log::since(text, jiff::Timestamp::now())
        .map_err(|error| anyhow::anyhow!("`--since {}`: {error}", text.trim()))
}

/// How many lines of an answer `logs` shows, and how many characters of each.
const SHOWN_LINES: usize = 6;
const SHOWN_WIDTH: usize = 200;

/// `logs show ID`: one run whole.
fn show(id: &str, format: ReportFormat) -> anyhow::Result<Outcome> {
    let number: i64 =
        id.trim().trim_start_matches('#').parse().map_err(|_| {
            anyhow::anyhow!("`{id}` is not a run's number (`llmtool logs` lists them)")
        })?;
    let run = with_log(|log| async move { log.get(number).await })?.flatten();
    let Some(run) = run else {
        anyhow::bail!("the run log has no run #{number} (`llmtool logs` lists the runs)");
    };
    let text = match format {
        ReportFormat::Json => serde_json::to_string_pretty(&run)? + "\n",
        ReportFormat::Text => whole(&run),
    };
    io::write_stdout(text.as_bytes())?;
    Ok(Outcome::Ok)
}

/// One run whole, for the terminal.
fn whole(run: &Record) -> String {
    let mut text = heading(run);
    let mut part = |title: &str, body: &str| {
        let _ = writeln!(text, "\n{title}");
        for line in body.lines() {
            let _ = writeln!(text, "    {line}");
        }
    };
    part("Tool", &format!("{} ({})", run.tool_path.as_deref().unwrap_or("-"), run.tool_hash));
    match &run.variables {
        Some(values) => part("Values", &serde_json::to_string_pretty(values).unwrap_or_default()),
        None => part("Values", &format!("(only their hash is kept: {})", run.variables_hash)),
    }
    part("Prompt", run.prompt.as_deref().unwrap_or("(not kept)"));
    if !run.calls.is_empty() {
        let calls: Vec<String> = run
            .calls
            .iter()
            .map(|call| {
                let how = if call.failed { "failed" } else { "returned" };
                format!(
                    "{} {}\n  {how} in {} ms: {}",
                    call.name, call.arguments, call.ms, call.result
                )
            })
            .collect();
        part("Function calls", &calls.join("\n"));
    }
    if let Some(error) = &run.error {
        part("Error", error);
    }
    if let Some(answer) = &run.answer {
        part("Answer", answer);
    }
    text
}

/// One run, for the terminal: a heading line, then the start of the answer.
fn shown(run: &Record) -> String {
    let mut text = heading(run);
    let lines: Vec<&str> =
        run.error.iter().chain(run.answer.iter()).flat_map(|t| t.lines()).collect();
    for line in lines.iter().take(SHOWN_LINES) {
        match line.char_indices().nth(SHOWN_WIDTH) {
            Some((cut, _)) => {
                let _ = writeln!(text, "    {}…", &line[..cut]);
            }
            None => {
                let _ = writeln!(text, "    {line}");
            }
        }
    }
    if lines.len() > SHOWN_LINES {
        let _ = writeln!(
            text,
            "    … {} more line(s): llmtool logs show {}",
            lines.len() - SHOWN_LINES,
            run.id.unwrap_or_default()
        );
    }
    text
}

/// A run's heading line: id, time, origin, tool, model, outcome, tokens, cost, latency.
fn heading(run: &Record) -> String {
    let tool = run.tool_name.as_deref().or(run.tool_path.as_deref()).unwrap_or("?");
    let tokens = match (run.input_tokens, run.output_tokens) {
        (Some(input), Some(output)) => {
            format!("{} in, {} out", thousands(input), thousands(output))
        }
        _ => "tokens ?".to_owned(),
    };
    let cost = run.cost_usd.map_or_else(|| "unpriced".to_owned(), dollars);
    let mut text = format!(
        "#{} {}  {}  {tool}  {}/{}  {}  {tokens}  {cost}",
        run.id.unwrap_or_default(),
        transcript::second(&run.started_at),
        run.origin,
        run.provider,
        run.model,
        run.outcome.as_str(),
    );
    if let Some(latency) = run.latency_ms {
        let _ = write!(text, "  {} ms", thousands(latency));
    }
    match run.calls.len() {
        0 => {}
        1 => text.push_str("  1 function call"),
        calls => {
            let _ = write!(text, "  {calls} function calls");
        }
    }
    if let (Some(conversation), Some(turn)) = (&run.conversation, run.turn) {
        let _ = write!(text, "  conversation {conversation} turn {turn}");
    }
    text.push('\n');
    text
}

fn table(totals: &[Total], by: UsageBy) -> String {
    let mut table = Table::new();
    table
        .load_style(presets::ASCII_BORDERS_ONLY_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    table.set_header([by.name(), "runs", "input tokens", "output tokens", "cost"]);
    let mut all = Total {
        key: "all".into(),
        runs: 0,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        unpriced_runs: 0,
    };
    for total in totals {
        table.add_row(row(total));
        all.runs += total.runs;
        all.input_tokens += total.input_tokens;
        all.output_tokens += total.output_tokens;
        all.cost_usd += total.cost_usd;
        all.unpriced_runs += total.unpriced_runs;
    }
    table.add_row(row(&all));
    table.to_string()
}

fn row(total: &Total) -> [String; 5] {
    let mut cost = dollars(total.cost_usd);
    if total.unpriced_runs > 0 {
        let _ = write!(cost, " (+{} unpriced)", total.unpriced_runs);
    }
    [
        total.key.clone(),
        thousands(total.runs),
        thousands(total.input_tokens),
        thousands(total.output_tokens),
        cost,
    ]
}

/// Cost per day as a bar chart, the longest bar the most expensive day.
fn chart(days: &[Total]) -> String {
    let most = days.iter().map(|d| d.cost_usd).fold(0.0, f64::max);
    let mut text = String::from("cost per day\n");
    for day in days {
        let width =
            if most > 0.0 { (day.cost_usd / most * BAR_WIDTH as f64).round() as usize } else { 0 };
        let _ = writeln!(
            text,
            "{}  {:<BAR_WIDTH$}  {}",
            day.key,
            "█".repeat(width),
            dollars(day.cost_usd)
        );
    }
    text
}
