//! `llmtool sandbox`: fetch and inspect the Python runtime smart tools run on.

mod args;

pub(crate) use args::SandboxCommand;

use llmtool_runtime::site;
use llmtool_runtime::smart::{self, COMPILER, PYTHON_RUNTIME};

use crate::commands::model;
use crate::outcome::Outcome;

pub(crate) fn run(command: &SandboxCommand) -> anyhow::Result<Outcome> {
    match command {
        SandboxCommand::Pull { from, compiler_from, requirements } => {
            let progress = model::progress();
            let path = smart::pull_python(from.as_deref(), &*progress)?;
            let started = std::time::Instant::now();
            if smart::compile_python(&path, compiler_from.as_deref(), &*progress)? {
                eprintln!(
                    "compiled it for this machine in {:.1} s",
                    started.elapsed().as_secs_f64()
                );
            }
            println!("{}", path.display());
            for tool in requirements {
                let Some(loaded) = crate::commands::run::load(tool)? else {
                    return Ok(Outcome::Problems);
                };
                // A tool file gets its lock beside it; one of a library (or standard input)
                // is locked in the sandbox folder alone, where a server finds it.
                let lock = tool.is_file().then(|| site::lock_path(tool));
                match site::site_folder(&loaded.tool, lock.as_deref(), true) {
                    Ok(Some(folder)) => {
                        let locked = lock.map_or_else(
                            || "locked in the sandbox folder".to_owned(),
                            |lock| format!("lock {}", lock.display()),
                        );
                        eprintln!(
                            "{}: requirements in {} ({locked})",
                            loaded.name,
                            folder.display()
                        );
                    }
                    Ok(None) => eprintln!("{}: no requirements", loaded.name),
                    Err(error) => {
                        eprintln!("error: {}: {error}", loaded.name);
                        return Ok(Outcome::Problems);
                    }
                }
            }
            Ok(Outcome::Ok)
        }
        SandboxCommand::Status => {
            let spec = &PYTHON_RUNTIME;
            println!("runtime:  {} ({} bytes, SHA-256 {})", spec.file, spec.bytes, spec.sha256);
            println!("source:   {} ({})", spec.wheels_text(), spec.license);
            println!("folder:   {}", smart::sandbox_dir()?.display());
            let compiled = smart::compiled_python_path()?;
            match smart::installed_python() {
                Some(path) if smart::python_ready() => {
                    println!("status:   installed and intact at {}", path.display());
                    println!("compiled: {} ({})", compiled.display(), COMPILER.requirement);
                    Ok(Outcome::Ok)
                }
                Some(path) => {
                    println!(
                        "status:   installed at {}, not compiled for this machine; `llmtool sandbox pull` compiles it",
                        path.display()
                    );
                    Ok(Outcome::Problems)
                }
                None => {
                    println!("status:   not installed; `llmtool sandbox pull` fetches it");
                    Ok(Outcome::Problems)
                }
            }
        }
    }
}

/// A server's start with `--smart-tools` (`serve`, `mcp`): its open-files limit raised to the
/// hard one, and the Python runtime fetched and compiled with `--yes`; without it, a missing
/// runtime is said once here, since every smart run fails until it is pulled.
pub(crate) fn ready_python(yes: bool) -> anyhow::Result<()> {
    // Each run holds up to its own bound of descriptors, several runs at once.
    llmtool_runtime::smart::raise_open_files_limit();
    if smart::python_ready() {
        return Ok(());
    }
    if yes {
        let progress = model::progress();
        let path = match smart::installed_python() {
            Some(path) => path,
            None => smart::pull_python(None, &*progress)?,
        };
        smart::compile_python(&path, None, &*progress)?;
    } else {
        eprintln!(
            "warning: smart tools cannot run until the Python runtime is installed: run `llmtool sandbox pull`, or start with `--yes`"
        );
    }
    Ok(())
}
