// The Control Center's Slack section (on the integrations page): the app's client id and its
// client and signing secrets (sealed by the server at once, never shown again), "Add to Slack"
// (Slack's OAuth page, coming back to the server), whether the server answers Slack now and
// why not, and removing the app. A server whose Slack app comes from `serve`'s files shows
// that, and nothing to change.

import { api, el, say, withCode } from "./common.js";

const OUTCOMES = {
  installed: ["Slack is added: members can use `/llmtool`, and conversations can be connected to channels.", "info"],
  cancelled: ["“Add to Slack” was cancelled on Slack's page: nothing changed.", "error"],
  failed: ["Slack did not give the bot's token: the server's log says why. Start “Add to Slack” again.", "error"],
};

/** Fills `section` with the Slack setup, and fills it again after each change. */
export async function slackSetup(section) {
  const setup = await api("/control/slack");
  const app = setup.app;
  const heading = el("h2", { id: "slack-title" }, "Slack");
  if (setup.source === "files") {
    section.replaceChildren(heading, el("p", { class: "help" }, ...withCode(`This server's Slack app is set by its \`--slack-signing-secret-file\` and \`--slack-bot-token-file\`: change it there. ${setup.answering ? "It answers Slack now." : "It does not answer Slack now: its token was revoked; restart the server with a new one."}`)));
    return;
  }
  const state = !app
    ? "Not set up. Create the app from `llmtool slack manifest`, then give its credentials below."
    : app.enabled
      ? `Added to the workspace ${app.team_name ?? app.team_id} by ${app.installed_by ?? "an admin"}: Slack is answered.`
      : `Off: ${app.disabled_reason ?? "not added to Slack yet"}.`;
  const field = (id, label, attributes, help) =>
    el("div", { class: "field" }, el("label", { for: id }, label), el("input", { id, autocomplete: "off", ...attributes, "aria-describedby": `${id}-help` }), el("p", { id: `${id}-help`, class: "help" }, help));
  const kept = app ? "Kept sealed; leave it empty to keep it." : "From the app's Basic Information page on Slack.";
  const form = el(
    "form",
    { id: "slack-form", class: "form-row" },
    field("slack-client-id", "Client id", { value: app?.client_id ?? "", required: true, inputmode: "decimal" }, "Digits and a dot, from the app's Basic Information page."),
    field("slack-client-secret", "Client secret", { type: "password", required: !app }, kept),
    field("slack-signing-secret", "Signing secret", { type: "password", required: !app }, kept),
    el("div", { class: "field" }, el("button", { type: "submit" }, app ? "Save" : "Set up")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = (id) => document.getElementById(id).value.trim() || undefined;
    const body = { client_id: value("slack-client-id") ?? "", client_secret: value("slack-client-secret"), signing_secret: value("slack-signing-secret") };
    await change(section, () => api("/control/slack", { method: "PUT", json: body }), "Saved. “Add to Slack” installs it in the workspace.");
  });
  const add = el("button", { type: "button", id: "slack-install", onclick: () => install() }, app?.enabled ? "Add to Slack again" : "Add to Slack");
  const remove = el(
    "button",
    {
      type: "button",
      class: "danger",
      onclick: () => {
        if (!confirm("Remove the Slack app, its secrets and its token? Slack is no longer answered.")) return;
        return change(section, () => api("/control/slack", { method: "DELETE" }), "The Slack app is removed.");
      },
    },
    "Remove Slack",
  );
  const redirect = setup.redirect_url
    ? el("p", { class: "help" }, ...withCode(`The app's redirect URL (in its manifest): \`${setup.redirect_url}\`.`))
    : el("p", { class: "help" }, ...withCode("“Add to Slack” needs the server's public address: set `public_url` under `[server]`."));
  section.replaceChildren(heading, el("p", { id: "slack-state" }, ...withCode(state)), form, redirect, app ? el("p", { class: "actions" }, add, " ", remove) : "");
}

async function change(section, work, done) {
  try {
    await work();
    say(done);
  } catch (error) {
    say(error.message, "error");
  }
  await slackSetup(section).catch((error) => say(error.message, "error"));
}

/** "Add to Slack": the browser goes to Slack's page, with a state made for this admin. */
async function install() {
  try {
    const started = await api("/control/slack/install", { method: "POST" });
    location.assign(started.url);
  } catch (error) {
    say(error.message, "error");
  }
}

/** What Slack's page came back with (`?slack=installed`), said once. */
export function sayOutcome() {
  const outcome = new URLSearchParams(location.search).get("slack");
  if (!OUTCOMES[outcome]) return;
  say(...OUTCOMES[outcome]);
  history.replaceState(null, "", location.pathname);
}
