// What every page of the studio shares: calls to the library's API (with the session's CSRF
// token on writes), the signed-in caller, a DOM builder that never parses HTML, and the
// page header (with the workspace's sidebar of conversations).

import { sidebar } from "./sidebar.js";
import { webWording } from "./wording.js";

/**
 * An API call that failed: the problem document (RFC 9457) the server answered; its message
 * in the web's wording (no flag, command or config key: `wording.js`).
 */
export class ApiError extends Error {
  constructor(problem) {
    super(webWording(problem.detail || problem.title || "request failed"));
    this.problem = problem;
    this.status = problem.status;
  }
}

let sessionPromise = null;
/** Whether this page has had a signed-in caller: only then is a 401 a session that ended. */
let hadCaller = false;

/** The signed-in caller, `{name, role, csrf}`, or null. */
export function session() {
  if (!sessionPromise) {
    sessionPromise = fetch("/api/v1/session", { credentials: "same-origin" })
      .then((response) => (response.ok ? response.json() : null))
      .catch(() => null)
      .then((caller) => {
        if (caller) hadCaller = true;
        return caller;
      });
  }
  return sessionPromise;
}

/** Forgets the cached caller (after signing in or out). */
export function resetSession() {
  sessionPromise = null;
}

/** Whether the caller's role is at least `role`. */
export function canAct(caller, role) {
  const ranks = { viewer: 1, editor: 2, admin: 3, owner: 4 };
  return Boolean(caller) && ranks[caller.role] >= ranks[role];
}

/**
 * Calls `/api/v1${path}`. `json` is sent as JSON, `text` as a tool file. Resolves to the
 * parsed JSON answer (or null for 204); rejects with an ApiError.
 */
export async function api(path, { method = "GET", json, text, form, signal } = {}) {
  const headers = {};
  let body;
  if (json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(json);
  } else if (text !== undefined) {
    headers["content-type"] = "application/json";
    body = text;
  } else if (form !== undefined) {
    // A FormData body: the browser writes its multipart type and boundary.
    body = form;
  }
  const send = async () => {
    if (method !== "GET" && method !== "HEAD") {
      const caller = await session();
      if (caller?.csrf) headers["x-csrf-token"] = caller.csrf;
    }
    return fetch(`/api/v1${path}`, { method, headers, body, signal, credentials: "same-origin" });
  };
  let response = await send();
  if (response.status === 403 && (await response.clone().text()).includes("CSRF")) {
    // Signed in again elsewhere: the page's CSRF token is stale. Learn the new one, once.
    resetSession();
    response = await send();
  }
  if (response.status === 204) return null;
  const answer = await response.json().catch(() => ({ title: response.statusText, status: response.status }));
  if (!response.ok) {
    if (response.status === 401) signedOut();
    throw new ApiError(answer);
  }
  return answer;
}

/**
 * The session ended (expired, signed out elsewhere): say so, with a way back in, and tell the
 * page (`studio:signed-out`) so that it turns off what needs a session. A page that never had
 * one says nothing here: it shows what a visitor may do in its own layout.
 */
function signedOut() {
  if (!hadCaller) return;
  resetSession();
  header();
  document.dispatchEvent(new Event("studio:signed-out"));
  const status = document.getElementById("status");
  if (status) {
    status.replaceChildren(
      "You are not signed in (any more). ",
      el("a", { href: `/signin?next=${encodeURIComponent(location.pathname)}`, target: "_blank" }, "Sign in in a new tab"),
      ", then try again: nothing on this page is lost.",
    );
    status.dataset.kind = "error";
  }
}

/**
 * Runs a tool and hands each Server-Sent Event to `onEvent(name, data)`; resolves when the
 * stream ends. Rejects with an ApiError when the run is refused before it starts.
 */
export async function runTool(slug, body, onEvent, { signal, version } = {}) {
  const address = version ? path`/api/v1/tools/${slug}/run?version=${version}` : path`/api/v1/tools/${slug}/run`;
  await streamRun(address, body, onEvent, { signal });
}

/**
 * Posts `body` to `address`, a run's stream (a tool's run, or a conversation's follow-up), and
 * calls `onEvent(name, data)` for each of its Server-Sent Events (`start`, `text`, `done`).
 */
export async function streamRun(address, body, onEvent, { signal } = {}) {
  const caller = await session();
  const response = await fetch(address, {
    method: "POST",
    headers: { "content-type": "application/json", ...(caller ? { "x-csrf-token": caller.csrf } : {}) },
    body: JSON.stringify(body),
    signal,
    credentials: "same-origin",
  });
  if (!response.ok) {
    if (response.status === 401) signedOut();
    throw new ApiError(await response.json().catch(() => ({ status: response.status, title: response.statusText })));
  }
  let ended = false;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) {
        if (name === "done") ended = true;
        onEvent(name, JSON.parse(data.join("\n")));
      }
    }
  }
  if (!ended) throw new Error("the stream ended before the run did");
}

/**
 * Builds an element: `el("a", {href: "/", class: "x", onclick: f}, "text", child)`. Text is
 * always set as text, never parsed as HTML.
 */
export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") element.addEventListener(key.slice(2), value);
    else if (value === true) element.setAttribute(key, "");
    else element.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Fills the page's `<header>`: the studio's name, its pages, and who is signed in. */
export async function header() {
  const bar = document.querySelector("header");
  const caller = await session();
  const signOut = async () => {
    await api("/session", { method: "DELETE" }).catch(() => {});
    resetSession();
    location.href = "/";
  };
  bar.replaceChildren(
    el("a", { href: "/", class: "brand" }, "llmtool studio"),
    el(
      "nav",
      { "aria-label": "Main" },
      el("a", { href: "/" }, "Gallery"),
      canAct(caller, "editor") ? el("a", { href: "/new" }, "New tool") : null,
      canAct(caller, "admin") ? el("a", { href: "/people" }, "People") : null,
      canAct(caller, "admin") ? el("a", { href: "/teams" }, "Teams") : null,
      caller ? el("a", { href: "/control/spend" }, canAct(caller, "admin") ? "Control Center" : "Spend") : null,
      caller ? el("a", { href: "/tokens" }, "Tokens") : null,
    ),
    caller
      ? el("span", { class: "who" }, `${caller.name} (${caller.role}) `, el("button", { type: "button", onclick: signOut }, "Sign out"))
      : el("a", { href: `/signin?next=${encodeURIComponent(location.pathname)}`, class: "who" }, "Sign in"),
  );
  // The workspace's conversations beside every page a member sees signed in.
  if (caller) sidebar();
  return caller;
}

/**
 * Runs `work` (an action of the page), says `done` (or the text `work` gives back) in the
 * status line, and shows the page's data again with `reload`; a failure is said instead.
 */
export async function attempt(work, done, reload) {
  try {
    const said = await work();
    say(typeof said === "string" ? said : done);
    await reload();
  } catch (error) {
    say(error.message, "error");
  }
}

/** Shows `message` in the page's status line (read out by screen readers). */
export function say(message, kind = "info") {
  const status = document.getElementById("status");
  if (!status) return;
  status.replaceChildren(...withCode(message));
  status.dataset.kind = kind;
}

/**
 * `text` as nodes, each `` `quoted` `` part as `<code>` (the server's messages quote names the
 * way Markdown does); never parsed as HTML. An unpaired backtick stays as it is.
 */
export function withCode(text) {
  const parts = String(text ?? "").split("`");
  if (parts.length < 3) return [String(text ?? "")];
  const nodes = [];
  parts.forEach((part, index) => {
    const last = index === parts.length - 1;
    if (index % 2 === 1 && !last) nodes.push(el("code", {}, part));
    else if (index % 2 === 1) nodes.push(`\`${part}`);
    else if (part) nodes.push(part);
  });
  return nodes;
}

/**
 * A URL path whose every interpolated value is one encoded segment:
 * path`/tools/${slug}/versions/${n}`. A value that is empty, `.` or `..` (which the URL parser
 * would resolve into another path, even encoded) is refused, never sent.
 */
export function path(strings, ...values) {
  return strings.reduce((out, text, i) => out + text + (i < values.length ? segment(values[i]) : ""), "");
}

function segment(value) {
  const text = String(value ?? "");
  if (text === "" || text === "." || text === "..") {
    throw new ApiError({ status: 400, title: "Bad Request", detail: `\`${text}\` cannot be part of an address` });
  }
  return encodeURIComponent(text);
}

/**
 * `next` if it names a page of this site, else the gallery. The path given back is read again
 * as the browser will read it: the parser's normalisation can turn `/.//host`, `/..//host` or
 * `/./\host` into `//host`, which is another site.
 */
export function sameSite(next) {
  if (!next) return "/";
  try {
    const url = new URL(next, location.origin);
    const target = `${url.pathname}${url.search}${url.hash}`;
    const again = new URL(target, location.origin);
    const leaves = url.origin !== location.origin || again.origin !== location.origin || /^[/\\]{2}/.test(target);
    return leaves ? "/" : target;
  } catch {
    return "/";
  }
}

/** The tool's slug in a studio URL (`/t/SLUG`, `/t/SLUG/edit`). */
export function slugOfPage() {
  const match = location.pathname.match(/^\/t\/([a-z0-9-]+)/);
  return match ? match[1] : null;
}

/** US dollars, with enough digits for a fraction of a cent. */
export function dollars(amount) {
  if (amount === null || amount === undefined) return "unpriced";
  // As every llmtool report writes it: $0, cents from a dollar, six decimals below.
  if (amount === 0) return "$0";
  return Math.abs(amount) >= 1 ? `$${amount.toFixed(2)}` : `$${amount.toFixed(6)}`;
}
