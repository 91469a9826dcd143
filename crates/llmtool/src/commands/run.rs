//! `llmtool run`: render a tool, send it to a model, stream the answer, enforce the expected
//! output.

mod args;

pub(crate) use args::{RunArgs, RunFormat};

use std::io::Write as _;
use std::sync::Arc;

use anyhow::Context as _;
use llmtool_providers::ApiKind;
use llmtool_providers::run::RunOptions;
use llmtool_providers::transport::RetryPolicy;
use llmtool_runtime::{
    Fetch, LogPolicy, ParamOverrides, Rejected, RunError, Runtime, RuntimeOptions, Subject,
};

use crate::outcome::Outcome;

use crate::commands::render::{load_tool, print_value_problems, read_inputs};
use crate::commands::{cost, model};
use crate::{io, secrets, settings};

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.tool);
    let Some((document, template)) = load_tool(&args.tool, &name)? else {
        return Ok(Outcome::Problems);
    };
    let tool = document.tool.as_ref().context("a checked tool has a model")?;
    let inputs = read_inputs(&args.variables, template.variables())?;
    let prompt = match template.render(&inputs) {
        Ok(prompt) => prompt,
        Err(problems) => {
            print_value_problems(&name, &document.text, &template, &inputs, &problems);
            return Ok(Outcome::Problems);
        }
    };
    let providers = settings::load_providers(args.target.config.as_deref())?;
    let options = RuntimeOptions {
        retry: RetryPolicy {
            max_retries: args.retries,
            max_rate_limit_retries: args.retries,
            ..RetryPolicy::default()
        },
        fetch: if args.yes { Fetch::Yes } else { Fetch::Ask(Arc::new(model::ask)) },
        progress: Some(model::progress()),
        seed: args.seed,
        log: LogPolicy::from_env(args.no_log_values),
        ..settings::runtime_options(&args.target)
    };
    let overrides = ParamOverrides { temperature: args.temperature, max_tokens: args.max_tokens };
    let mut tool_runtime = Runtime::new(providers.clone(), options.clone())?;
    if args.dry_run {
        tool_runtime = settings::with_stand_in_key(tool_runtime, tool, providers, options)?;
    }
    let request = match tool_runtime.request(tool, prompt, overrides) {
        Ok(request) => request,
        Err(RunError::Blocked(report)) => {
            eprintln!("error: {report}");
            return Ok(Outcome::Problems);
        }
        // The input is too long to send: its problem, not a failure to send (exit 1).
        Err(error @ (RunError::PromptTooLarge { .. } | RunError::OverContextWindow { .. })) => {
            eprintln!("error: {error}");
            return Ok(Outcome::Problems);
        }
        Err(error) => return Err(error.into()),
    };
    if let Some(note) = &request.target.note {
        eprintln!("note: {note}");
    }
    for notice in &request.notices {
        eprintln!("warning: {notice}");
    }
    let options = RunOptions {
        max_repairs: args.max_repairs,
        raw: args.raw,
        live: args.format == RunFormat::Text,
        ..RunOptions::streamed(!args.no_stream)
    };
    if args.dry_run && request.target.endpoint.api == ApiKind::Local {
        let shown = serde_json::json!({ "provider": "local", "model": request.target.model, "prompt": request.prompt });
        let text = serde_json::to_string_pretty(&shown)? + "\n";
        io::write_stdout(secrets::redact(&text).as_bytes())?;
        let counted = match tool_runtime.local_prompt_tokens(&request) {
            Some(Ok(tokens)) => Some(tokens),
            Some(Err(error)) => {
                eprintln!("warning: the prompt's tokens cannot be counted: {error}");
                None
            }
            None => None,
        };
        eprintln!("{}", cost::estimate(&request, counted));
        return Ok(Outcome::Ok);
    }
    if args.dry_run {
        let (http, warnings) = request.first_request(options);
        print_warnings(&warnings);
        io::write_stdout(secrets::redact(&http.display_redacted()).as_bytes())?;
        eprintln!("{}", cost::estimate(&request, None));
        return Ok(Outcome::Ok);
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    // The local model is fetched and loaded before Ctrl-C is caught, so that Ctrl-C still
    // stops a download or a load at once.
    runtime.block_on(tool_runtime.prepare(&request))?;
    let subject = Subject::new("run", Some(name.clone()), tool, &inputs);
    let mut streamed = false;
    let mut stdout_error = None;
    let mut on_text = |text: &str| {
        streamed = true;
        let mut stdout = std::io::stdout().lock();
        if let Err(error) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
            stdout_error.get_or_insert(error);
        }
    };
    let ctrl_c = async {
        // A Ctrl-C that cannot be listened for never comes.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let finished = runtime.block_on(tool_runtime.execute(
        &request,
        options,
        Some(&subject),
        &mut on_text,
        ctrl_c,
    ));
    if let Some(problem) = &finished.not_kept {
        eprintln!("warning: the run is not logged: {problem}");
    }
    if let Some(error) = stdout_error {
        return Err(error.into());
    }
    let cancelled = finished.cancelled();
    let report = match finished.result {
        Ok(report) => report,
        Err(_) if cancelled => {
            eprintln!("\ncancelled");
            return Ok(Outcome::Cancelled);
        }
        Err(error) => {
            if streamed {
                eprintln!();
            }
            return Err(error.into());
        }
    };
    print_warnings(&report.warnings);
    match args.format {
        RunFormat::Json => {
            let text = serde_json::to_string_pretty(&report)? + "\n";
            io::write_stdout(secrets::redact(&text).as_bytes())?;
        }
        RunFormat::Text if streamed => {
            if io::stdout_is_terminal() && !report.raw.ends_with('\n') {
                io::write_stdout(b"\n")?;
            }
        }
        RunFormat::Text => {
            if let Some(output) = &report.output {
                let mut text = output.clone();
                if io::stdout_is_terminal() && !text.ends_with('\n') {
                    text.push('\n');
                }
                io::write_stdout(text.as_bytes())?;
            }
        }
    }
    if args.usage {
        eprintln!("{}", cost::summary(&report));
    }
    if let Err(rejected) = Rejected::check(&report) {
        eprintln!("{}", secrets::redact(&format!("error: {rejected}")));
        return Ok(Outcome::Problems);
    }
    Ok(Outcome::Ok)
}

fn print_warnings(warnings: &[String]) {
    for warning in warnings {
        eprintln!("warning: {}", secrets::redact(warning));
    }
}
