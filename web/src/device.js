// Signing a terminal in (`llmtool login URL`): the terminal shows a code and this page's
// address; the signed-in member checks the code is the one in their terminal, then allows or
// denies it. Allowed, the terminal gets a token of the member's own, for 90 days.

import { api, el, header, path, say } from "./common.js";

const main = document.getElementById("main");

async function device() {
  const caller = await header();
  const code = new URLSearchParams(location.search).get("code") || "";
  if (!caller) {
    const back = `/device${code ? `?code=${encodeURIComponent(code)}` : ""}`;
    const signIn = el("a", { href: `/signin?next=${encodeURIComponent(back)}` }, "Sign in");
    main.replaceChildren(el("h1", {}, "Sign in a terminal"), el("p", {}, signIn, " first: the terminal gets a token of yours."));
    return;
  }
  const input = el("input", { id: "code", name: "code", autocomplete: "off", spellcheck: "false", value: code, placeholder: "XXXX-XXXX", required: true });
  const form = el(
    "form",
    { onsubmit: (event) => { event.preventDefault(); look(input.value.trim()); } },
    el("label", { for: "code" }, "The code your terminal shows"),
    input,
    el("button", { type: "submit" }, "Continue"),
  );
  main.replaceChildren(el("h1", {}, "Sign in a terminal"), el("p", {}, "Running ", el("code", {}, "llmtool login"), "? Enter the code it shows."), form);
  if (code) look(code);
  else input.focus();
}

/** Shows the grant `code` names and asks the member to allow or deny it. */
async function look(code) {
  let grant;
  try {
    grant = await api(path`/device/${code}`);
  } catch (error) {
    say(error.status === 404 ? "No sign-in waits with that code: it was answered or it expired. Sign in from your terminal again." : error.message, "error");
    return;
  }
  const answer = async (allow) => {
    try {
      await api(path`/device/${grant.user_code}`, { method: "POST", json: { allow } });
    } catch (error) {
      say(error.message, "error");
      return;
    }
    main.replaceChildren(
      el("h1", {}, allow ? "Terminal signed in" : "Sign-in denied"),
      el("p", {}, allow ? "Go back to your terminal: it has a token of yours now, listed on your Tokens page, where you can revoke it." : "The terminal gets no token. You can close this page."),
      el("p", {}, el("a", { href: "/tokens" }, "Your tokens")),
    );
  };
  const allow = el("button", { type: "button", class: "primary", onclick: () => answer(true) }, "Allow");
  main.replaceChildren(
    el("h1", {}, "Sign in a terminal"),
    el("p", {}, "The terminal ", el("strong", {}, grant.client), " asks to act as you with the code ", el("code", {}, grant.user_code), "."),
    el("p", {}, "Allow it only if your terminal shows this same code. It gets a token with your role, for 90 days."),
    el("div", { class: "actions" }, allow, el("button", { type: "button", onclick: () => answer(false) }, "Deny")),
  );
  allow.focus();
}

device();
