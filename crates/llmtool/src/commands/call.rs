//! `llmtool call`: a tool run with the arguments a model gave its exported function form. The
//! arguments are read back by the rule that named the parameters
//! (`llmtool_convert::inputs_from_arguments`), then the tool runs as `llmtool run` runs
//! it: the one run path, its log (origin `call`), data-loss prevention and cost.

mod args;

pub(crate) use args::CallArgs;

use anyhow::Context as _;
use llmtool_convert::inputs_from_arguments;

use crate::commands::render::ValuesFrom;
use crate::commands::run::{self, How};
use crate::io;
use crate::outcome::Outcome;

pub(crate) fn run(args: &CallArgs) -> anyhow::Result<Outcome> {
    let from_stdin = args.arguments == "-";
    if from_stdin && io::is_stdin(&args.tool) {
        anyhow::bail!("the tool and the arguments cannot both come from standard input");
    }
    let text = if from_stdin {
        let bytes = io::read_input(std::path::Path::new("-"))?;
        String::from_utf8(bytes).context("the arguments on standard input are not UTF-8")?
    } else {
        args.arguments.clone()
    };
    let Some(loaded) = run::load(&args.tool)? else { return Ok(Outcome::Problems) };
    let arguments: serde_json::Value = match serde_json::from_str(&text) {
        Ok(arguments) => arguments,
        Err(error) => {
            eprintln!("error: {}: the arguments are not JSON: {error}", loaded.name);
            return Ok(Outcome::Problems);
        }
    };
    // A key given twice means one value to one reader and another to the next (serde keeps
    // the last): refused, as a tool file's is and as the server refuses it.
    let duplicate = llmtool_format::syntax::parse(&text)
        .diagnostics
        .into_iter()
        .find(|found| found.rule.code == llmtool_format::syntax::codes::DUPLICATE_KEY.code);
    if let Some(duplicate) = duplicate {
        eprintln!("error: {}: the arguments: {}", loaded.name, duplicate.message);
        return Ok(Outcome::Problems);
    }
    let inputs = match inputs_from_arguments(loaded.template.variables(), &arguments) {
        Ok(inputs) => inputs,
        Err(problem) => {
            eprintln!("error: {}: {problem}", loaded.name);
            return Ok(Outcome::Problems);
        }
    };
    // Signed in to the library, its tool runs there (as `llmtool run registry:…` does).
    if let Some((library, reference)) = run::on_server::library_for(&args.tool, args.local)? {
        let model = args.target.model.as_deref();
        return run::on_server::send(&library, &reference, &inputs, model, args.format);
    }
    let how = How {
        tool: &args.tool,
        target: &args.target,
        turn: &args.turn,
        sandbox: args.sandbox,
        format: args.format,
        max_repairs: args.max_repairs,
        raw: false,
        dry_run: false,
        origin: "call",
        values_from: ValuesFrom::Arguments,
    };
    run::run_with(&how, loaded, inputs)
}
