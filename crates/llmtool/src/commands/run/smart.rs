//! `llmtool run` of a smart tool: its values checked as any tool's, its `execute` run in the
//! sandbox (the Python runtime fetched first, with consent), the result printed, and a failure
//! of the code shown at its line in the file. Exit 1 when the code fails (the input's
//! problem), 2 when the sandbox cannot run at all.

use llmtool_format::report::Source;
use llmtool_format::smart::code_line_span;
use llmtool_runtime::smart::Failure;
use llmtool_runtime::{RunError, Runtime, RuntimeOptions, SmartFinished, SmartRun, Subject, site};

use llmtool_format::template::Inputs;

use super::{How, Loaded, RunFormat, runtime_options};
use crate::commands::render::print_value_problems;
use crate::outcome::Outcome;
use crate::{io, secrets, settings};

pub(super) fn run(args: &How<'_>, loaded: Loaded, inputs: &Inputs) -> anyhow::Result<Outcome> {
    let Loaded { name, document, template, tool } = loaded;
    let from = args.values_from;
    let values = match template.resolve(inputs) {
        Ok(values) => values,
        Err(problems) => {
            print_value_problems(&name, &document.text, &template, inputs, &problems, from);
            return Ok(Outcome::Problems);
        }
    };
    let variables = template.values_object(&values);
    if args.dry_run {
        // Nothing runs: what `execute` would be given.
        let shown = serde_json::json!({ "runs": "sandbox", "variables": variables });
        let text = serde_json::to_string_pretty(&shown)? + "\n";
        io::write_stdout(secrets::redact(&text).as_bytes())?;
        return Ok(Outcome::Ok);
    }
    let providers = settings::load_providers(args.target.setup.config.as_deref())?;
    // Running the tool you named is asking for its code to run.
    let options = RuntimeOptions {
        smart: Some(args.sandbox.limits()?),
        ..runtime_options(args.target, args.turn)
    };
    let runtime = Runtime::new(providers, options)?;
    // The lock beside a tool file; a tool from standard input or a library has none.
    let lock =
        (!io::is_stdin(args.tool) && args.tool.is_file()).then(|| site::lock_path(args.tool));
    let fetch_requirements = match site::site_ready(&tool, lock.as_deref()) {
        Ok(true) => false,
        Ok(false) => args.turn.yes || ask_requirements(&tool),
        Err(error) => {
            eprintln!("error: {name}: {}", secrets::redact(&error.to_string()));
            return Ok(Outcome::Problems);
        }
    };
    let run =
        SmartRun { variables, scratch: true, lock, fetch_requirements, ..SmartRun::default() };
    let subject = Subject::new(args.origin, Some(name.clone()), &tool, inputs);
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let finished = tokio.block_on(runtime.run_smart(&tool, run, Some(&subject), ctrl_c));
    let finished = match finished {
        Ok(finished) => finished,
        // A package that cannot be used is the tool's problem (exit 1), said plainly.
        Err(error @ (RunError::Requirements(_) | RunError::RequirementsMissing(_))) => {
            eprintln!("error: {name}: {}", secrets::redact(&error.to_string()));
            return Ok(Outcome::Problems);
        }
        Err(error) => return Err(error.into()),
    };
    if let Some(problem) = &finished.not_kept {
        eprintln!("warning: the run is not in the run log: {}", secrets::redact(problem));
    }
    let outcome = match &finished.ran.result {
        Ok(_) => Outcome::Ok,
        Err(Failure::Cancelled) => {
            eprintln!("cancelled");
            return Ok(Outcome::Cancelled);
        }
        Err(Failure::Crashed { reason }) => {
            anyhow::bail!("the smart tool's sandbox failed: {reason}")
        }
        Err(_) => Outcome::Problems,
    };
    match args.format {
        RunFormat::Text => print_text(&name, &document.text, &tool, &finished, args.turn.usage)?,
        RunFormat::Json => print_json(&finished)?,
    }
    Ok(outcome)
}

/// Asks on the terminal whether to fetch the tool's requirements from PyPI ("no" is the
/// default); with no terminal there is nobody to ask, and nothing is fetched.
fn ask_requirements(tool: &llmtool_format::model::Tool) -> bool {
    let listed: Vec<&str> = tool.requirements().iter().map(|r| r.value.trim()).collect();
    let question = format!(
        "The tool needs packages from PyPI: {} (and what they depend on). Download them now?",
        listed.join(", ")
    );
    crate::commands::model::confirm(&question).unwrap_or(false)
}

/// The result on standard output; what the code printed, and a failure, on standard error.
fn print_text(
    name: &str,
    text: &str,
    tool: &llmtool_format::model::Tool,
    finished: &SmartFinished,
    usage: bool,
) -> anyhow::Result<()> {
    let ran = &finished.ran;
    if !ran.printed.is_empty() {
        eprint!("{}", secrets::redact(&ran.printed));
        if !ran.printed.ends_with('\n') {
            eprintln!();
        }
    }
    if ran.printed_dropped > 0 {
        eprintln!("({} more bytes printed, not kept)", ran.printed_dropped);
    }
    match &ran.result {
        Ok(result) => {
            let mut out = secrets::redact(result).into_owned();
            if !out.ends_with('\n') {
                out.push('\n');
            }
            io::write_stdout(out.as_bytes())?;
        }
        Err(failure) => {
            eprintln!("error: {}", secrets::redact(&failure.to_string()));
            let at =
                failure.line().and_then(|line| Some((line, code_line_span(text, tool, line)?)));
            if let Some((line, span)) = at {
                let place = Source::new(name, text).line_column(span.start);
                eprintln!(
                    "  --> {name}:{}:{} (line {line} of tool_code)",
                    place.line, place.column
                );
            }
        }
    }
    if usage {
        eprintln!("{}", usage_line(finished));
    }
    Ok(())
}

/// `--usage`: the sandbox's times and the model calls' tokens and cost.
fn usage_line(finished: &SmartFinished) -> String {
    let ran = &finished.ran;
    let mut line = format!(
        "sandbox: {:.2} s CPU, {:.2} s in all; {} llm() call(s)",
        ran.cpu.as_secs_f64(),
        ran.wall.as_secs_f64(),
        finished.calls.len()
    );
    let tokens = |pick: fn(&llmtool_runtime::ModelCall) -> Option<u64>| {
        finished.calls.iter().filter_map(pick).sum::<u64>()
    };
    if !finished.calls.is_empty() {
        line.push_str(&format!(
            ", {} tokens in, {} out",
            tokens(|c| c.input_tokens),
            tokens(|c| c.output_tokens)
        ));
        match finished.cost() {
            Some(cost) => line.push_str(&format!(", ${cost:.6}")),
            None => line.push_str(", cost unknown"),
        }
    }
    line
}

/// `--format json`: the result or the failure, the printed text, the calls and the times.
fn print_json(finished: &SmartFinished) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(&finished.summary())? + "\n";
    io::write_stdout(secrets::redact(&text).as_bytes())?;
    Ok(())
}
