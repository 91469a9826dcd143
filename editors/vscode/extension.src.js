// The VS Code side of llmtool: starts `llmtool lsp` for JSON files and lets it decide which
// are tool files. Bundled with its one dependency into extension.js by build.mjs.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

async function activate(context) {
  const settings = vscode.workspace.getConfiguration("llmtool");
  const server = { command: settings.get("path", "llmtool"), args: ["lsp"] };
  client = new LanguageClient(
    "llmtool",
    "llmtool",
    { run: server, debug: server },
    {
      documentSelector: [{ scheme: "file", language: "json" }, { scheme: "untitled", language: "json" }],
      initializationOptions: { globs: settings.get("globs", []) },
    },
  );
  context.subscriptions.push(client);
  await client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
