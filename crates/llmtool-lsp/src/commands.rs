//! What the lenses' commands do when the editor runs them: "Render" renders the open text with
//! the defaults; "Run" and "Test" run `llmtool run` and `llmtool test` on the saved file, as the
//! user would in a terminal, bounded in time and output.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

/// The longest a "Run" or "Test" may take before it is stopped.
const TIME_LIMIT: Duration = Duration::from_mins(10);
/// The most output kept from one.
const OUTPUT_LIMIT: usize = 1 << 20;

/// Runs this same `llmtool` with `arguments`; its exit status and output (stdout then
/// stderr, cut at [`OUTPUT_LIMIT`]).
pub async fn llmtool(arguments: &[&std::ffi::OsStr]) -> Value {
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(error) => {
            return json!({ "exit": null, "output": format!("cannot find llmtool: {error}") });
        }
    };
    let run = Command::new(program).args(arguments).kill_on_drop(true).output();
    match tokio::time::timeout(TIME_LIMIT, run).await {
        Ok(Ok(done)) => {
            let mut output = String::from_utf8_lossy(&done.stdout).into_owned();
            output.push_str(&String::from_utf8_lossy(&done.stderr));
            if output.len() > OUTPUT_LIMIT {
                let mut cut = OUTPUT_LIMIT;
                while !output.is_char_boundary(cut) {
                    cut -= 1;
                }
                output.truncate(cut);
                output.push_str("\n[output cut]");
            }
            json!({ "exit": done.status.code(), "output": output })
        }
        Ok(Err(error)) => {
            json!({ "exit": null, "output": format!("cannot start llmtool: {error}") })
        }
        Err(_) => {
            json!({ "exit": null, "output": format!("stopped after {} s", TIME_LIMIT.as_secs()) })
        }
    }
}
