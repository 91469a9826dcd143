//! What the tests that drive the binary against a tool library share.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::Receiver;

/// Runs `llmtool args` with the data folder `data`, no config, no run log and no library
/// from the environment, and `env` over that.
pub(crate) fn llmtool(data: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(args)
        .env("LLMTOOL_DATA_DIR", data)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_NO_LOG", "1")
        .env_remove("LLMTOOL_REGISTRY")
        .env_remove("LLMTOOL_TOKEN")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `llmtool serve` with `extra` arguments, its log in JSON: the child, its URL, and the
/// lines of its standard error from then on (read by a thread, so the server never blocks
/// on a full pipe).
pub(crate) fn serve(data: &Path, extra: &[&str]) -> (Child, String, Receiver<String>) {
    serve_with_file_limit(data, extra, None)
}

/// [`serve`], allowed at most `files` open files (soft and hard limit) when given.
pub(crate) fn serve_with_file_limit(
    data: &Path,
    extra: &[&str],
    files: Option<u32>,
) -> (Child, String, Receiver<String>) {
    let binary = env!("CARGO_BIN_EXE_llmtool");
    let mut command = match files {
        Some(files) => {
            let mut shell = Command::new("sh");
            shell.args(["-c", &format!("ulimit -n {files} && exec \"$0\" \"$@\""), binary]);
            shell
        }
        None => Command::new(binary),
    };
    let mut child = command
        .args(["serve", "--listen", "127.0.0.1:0", "--log-format", "json"])
        .args(extra)
        .env("LLMTOOL_DATA_DIR", data)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("MOCK_KEY", "mock-secret-key-5150")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let url = lines
        .iter()
        .find_map(|line| {
            let url = line.strip_prefix("llmtool serve: http://")?.split_once('/')?.0.to_owned();
            Some(format!("http://{url}"))
        })
        .unwrap();
    (child, url, lines)
}

/// The sample shop (examples/data/shop.sql) as a SQLite file in `folder`, made by Python's
/// own `sqlite3`.
pub(crate) fn sqlite_shop(folder: &Path) -> std::path::PathBuf {
    let file = folder.join("shop.db");
    let sql = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/shop.sql");
    let made = std::process::Command::new("python3")
        .args(["-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1]).executescript(open(sys.argv[2]).read())"])
        .arg(&file)
        .arg(sql)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    file
}

/// How many orders the SQLite shop at `shop` holds.
pub(crate) fn orders_in(shop: &Path) -> String {
    let counted = std::process::Command::new("python3")
        .args(["-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM orders').fetchone()[0])"])
        .arg(shop)
        .output()
        .unwrap();
    String::from_utf8_lossy(&counted.stdout).trim().to_owned()
}
