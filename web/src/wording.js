// The web wording of the server's messages. A problem's `detail` is written for every client,
// the command line's too, so it may say which flag, command or config key changes things
// (`--smart-tools`, `llmtool sandbox pull`, `[server.smtp]`). A page says what happened, and
// leaves the how to the server's operator: those hints are taken out, never shown as text.

/** A quoted part that speaks to the command line or the config file. */
const HINT = /`(?:--|llmtool |\[server|[a-z_]+ = )[^`]*`|`[^`]*(?:public_url|\.toml)[^`]*`/;
const HINTS = new RegExp(HINT.source, "g");

/** `text` (a server's message) as a page says it: no flag, command or config key in it. */
export function webWording(text) {
  let said = String(text ?? "");
  // An aside that is only a hint goes: "(or `llmtool integration add`)".
  said = said.replace(/\s*\(([^()]*)\)/g, (aside) => (HINT.test(aside) ? "" : aside));
  // So does how to do it: "... with `llmtool sandbox pull`", ", or `--yes`".
  said = said.replace(new RegExp(`\\s*(?:,? or|with|by|from) ${HINT.source}`, "g"), "");
  // A clause still made of hints is the operator's business.
  const clauses = said.split(/(?<=[:;]) /);
  const worded = clauses.map((clause, index) => {
    if (!HINT.test(clause)) return clause;
    const end = /[:;]$/.test(clause) ? clause.slice(-1) : "";
    return index === 0 ? `this needs the server's operator${end}` : `the server's operator can change this${end}`;
  });
  return worded.join(" ").replace(HINTS, "").replace(/\s+([,.;:])/g, "$1").trim();
}
