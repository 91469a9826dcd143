"""The release build of llmtool and of the mock LLM server (crates/llmtool-testkit, `mock-llm`),
the mock started, and a config file naming it as provider `mock` (model `mock/m`): what the
benchmarks that time `llmtool run` share."""
import os, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLMTOOL = os.path.join(ROOT, "target/release/llmtool")


def start():
    """Builds, starts the mock; returns (mock process, its URL, a work folder, the config file)."""
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "llmtool", "-p", "llmtool-testkit"], cwd=ROOT, check=True)
    mock = subprocess.Popen([os.path.join(ROOT, "target/release/mock-llm")], stdout=subprocess.PIPE, text=True)
    url = mock.stdout.readline().strip()
    work = tempfile.mkdtemp()
    config = os.path.join(work, "config.toml")
    with open(config, "w") as f:
        f.write(f'default_model = "mock/m"\n[providers.mock]\napi = "openai"\nbase_url = "{url}/v1"\n')
    return mock, url, work, config
