//! The arguments of `llmtool test`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::DlpArg;

/// Run the test files of tools (`NAME.tests.json` or `.yaml`) on models: every case on every
/// model, --repeat times, answers cached so a rerun costs nothing.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool test                                   # every test file under .\n  llmtool test examples/ --model local --seed 3\n  llmtool test classify.json -m openai/gpt-4o-mini -m anthropic/claude-haiku-4-5 --repeat 5 --min-pass 4\n  llmtool test --junit report.xml --format github\n  llmtool test --init classify.json\n  llmtool test classify.tests.json --to promptfoo --out eval/   # then: promptfoo eval -c eval/classify/promptfooconfig.yaml\n  llmtool test --from promptfoo promptfooconfig.yaml --out tools/   # then: llmtool test tools/\n\nA case passes when at least --min-pass of its runs pass (default: all). Exit status 1 when a\ncase fails or a test file has errors. See docs/testing.md."
)]
pub(crate) struct TestArgs {
    /// Test files, tools (their `NAME.tests.*` beside them), or folders searched for test
    /// files.
    #[arg(value_name = "PATH", default_value = ".")]
    pub(crate) paths: Vec<PathBuf>,
    /// A model to run every case on (repeat for more; default: each tool's own
    /// `model_version` list).
    #[arg(long = "model", short, value_name = "MODEL")]
    pub(crate) models: Vec<String>,
    /// Runs of each case on each model.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub(crate) repeat: u32,
    /// Runs that must pass for a case to pass (default: all of them).
    #[arg(long, value_name = "K")]
    pub(crate) min_pass: Option<u32>,
    /// Runs sent at once.
    #[arg(long, short = 'j', default_value_t = 4, value_name = "N")]
    pub(crate) jobs: usize,
    /// Send every run, without reading or writing the answer cache.
    #[arg(long)]
    pub(crate) no_cache: bool,
    /// Keep only a hash of each case's values in the run log, not the values (see `llmtool
    /// logs`).
    #[arg(long)]
    pub(crate) no_log_values: bool,
    /// How the results are printed.
    #[arg(long, value_enum, default_value_t = TestFormat::Human)]
    pub(crate) format: TestFormat,
    /// Also write the results as `JUnit` XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
    /// Write a starter test file for TOOL (`NAME.tests.json` beside it) and stop.
    #[arg(long, value_name = "TOOL")]
    pub(crate) init: Option<PathBuf>,
    /// The local model's sampling seed (the same seed, the same answers).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// The configuration file (default: `$XDG_CONFIG_HOME/llmtool/config.toml`).
    #[arg(long, value_name = "FILE", env = "LLMTOOL_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Data-loss prevention's policy for every case (see `llmtool run --help`), over the tool's
    /// `x-dlp` and the config's `[dlp] policy`.
    #[arg(long, value_name = "POLICY")]
    pub(crate) dlp: Option<DlpArg>,
    /// Write each test file, with its tool, for another test runner instead of running it:
    /// `promptfoo` (a `promptfooconfig.yaml` and the prompt file beside it, for `promptfoo
    /// eval`), into a folder of its own under --out. The models are --model's, else the
    /// tool's.
    #[arg(long, value_name = "RUNNER", value_parser = ["promptfoo"], requires = "out", conflicts_with = "from")]
    pub(crate) to: Option<String>,
    /// Read PATH as another test runner's suite and write it as tools and their test files
    /// under --out instead of running it: `promptfoo` (a `promptfooconfig.yaml`, with the
    /// prompt files beside it); each prompt becomes `NAME.json` and `NAME.tests.json`.
    #[arg(long, value_name = "RUNNER", value_parser = ["promptfoo"], requires = "out")]
    pub(crate) from: Option<String>,
    /// Where --to and --from write (a folder, made if missing; nothing in it is overwritten).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

/// How `llmtool test` prints its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TestFormat {
    /// A table of cases by models, then why each failing case failed.
    Human,
    /// Every file, case, run and assertion as JSON.
    Json,
    /// GitHub Actions annotations on the failing cases' lines.
    Github,
}
