// What the Control Center's pages share: their own navigation (the current page marked), and
// the start of each page: the header, then the page's work for an admin (or, where the page
// serves everyone, for anyone signed in).

import { canAct, el, header, say } from "./common.js";

const PAGES = [
  ["/control/spend", "Spend"],
  ["/control/budgets", "Budgets"],
  ["/control/integrations", "Integrations", "admin"],
  ["/control/prices", "Prices"],
  ["/control/curate", "Curate tools", "admin"],
  ["/control/audit", "Audit log", "admin"],
];

/**
 * Starts a Control Center page: the header and the section's navigation, then `load(caller)`.
 * A page for admins says so to anyone else and hides its forms.
 */
export async function start(load, { adminsOnly = true, what = "this page" } = {}) {
  const caller = await header();
  const nav = document.getElementById("control-nav");
  nav.replaceChildren(
    ...PAGES.filter(([, , role]) => !role || canAct(caller, role)).map(([href, label]) =>
      el("a", { href, "aria-current": location.pathname === href ? "page" : false }, label),
    ),
  );
  if (!caller) {
    say("Sign in to see this page.", "error");
    return hideForms();
  }
  if (adminsOnly && !canAct(caller, "admin")) {
    say(`Only admins and owners see ${what}.`, "error");
    return hideForms();
  }
  await load(caller).catch((error) => say(error.message, "error"));
}

function hideForms() {
  for (const form of document.querySelectorAll("main form")) form.hidden = true;
}

/** A number of tokens or runs, grouped by thousands. */
export function count(n) {
  return Number(n ?? 0).toLocaleString("en-US");
}

/** Words separated by spaces or commas. */
export function words(text) {
  return text.split(/[\s,;]+/).filter(Boolean);
}
