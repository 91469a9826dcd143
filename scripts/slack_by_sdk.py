#!/usr/bin/env python3
"""Slack's side of `llmtool serve`, with its requests signed by the official `slack_sdk` package
(`slack_sdk.signature.SignatureVerifier`, PyPI) and a stand-in of Slack's Web API written here,
which records every call. A running server, given the signing secret and bot token files and the
stand-in's address (`--slack-signing-secret-file`, `--slack-bot-token-file`, `--slack-api-url`):

- takes no unsigned, stale or wrongly signed event (401), and answers `url_verification`;
- runs `/llmtool poet`'s modal, on its `view_submission`, as the member behind the Slack user
  (their verified e-mail), counted in that member's spend, and posts the answer as a thread;
- makes a mention in that thread, sent three times as Slack retries it (`X-Slack-Retry-Num`),
  exactly one turn and one posted answer;
- lets a member of another team, who does not see the tool, run nothing from Slack.

Then a second server takes its Slack app from the Control Center instead: an admin sets the
app's credentials and finishes "Add to Slack" (the code traded through the stand-in's
`oauth.v2.access`); when Slack then refuses the bot token, the app is turned off, with
`slack.disable` in the audit log and a mail to the admin, received by a real SMTP server
(aiosmtpd, on loopback).

slack_sdk and aiosmtpd are installed under target/slack-py (once; LLMTOOL_SLACK_PY_DIR overrides). Needs
llmtool and mock-llm, built (checks.BUILD). Exits 1 when a check fails.
"""
import json, os, shutil, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.parse, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import BUILD, Checks, venv_python  # noqa: E402
from operations import Process, free_port, library, publish, request  # noqa: E402

WORK = os.environ.get("LLMTOOL_SLACK_PY_DIR", os.path.join(ROOT, "target", "slack-py"))
PACKAGES = ["slack-sdk==3.47.0", "aiosmtpd==1.4.6"]
PROBE = "from slack_sdk.signature import SignatureVerifier; import aiosmtpd"
MOCK = os.path.join(BUILD, "mock-llm")
LLMTOOL = os.path.join(BUILD, "llmtool")
SECRET = "8f742231b10e8888abcd99yyyzzz85a5-sdk"
BOT_TOKEN = "xoxb-sdk-test-bot-token"
ANSWER = "Tides turn twice a day."
CLIENT_SECRET = "sdk-client-secret-2291"
INSTALLED_TOKEN = "xoxb-sdk-installed-token"

# Signs each body given on standard input (one JSON line: body, timestamp, secret) with
# slack_sdk's own code, run by the virtual environment's Python.
SIGNER = r'''
import json, sys
from slack_sdk.signature import SignatureVerifier
for line in sys.stdin:
    asked = json.loads(line)
    verifier = SignatureVerifier(signing_secret=asked["secret"])
    signature = verifier.generate_signature(timestamp=asked["timestamp"], body=asked["body"])
    # The same package's check agrees, for a fresh timestamp.
    valid = verifier.is_valid(body=asked["body"], timestamp=asked["timestamp"], signature=signature)
    print(json.dumps({"signature": signature, "valid": valid}), flush=True)
'''

# An SMTP server on loopback, run by the virtual environment's Python: each message received is
# printed as a JSON line (recipients and the message), after the line `smtp PORT`.
SMTP = r'''
import json, logging, socket, time
from aiosmtpd.controller import Controller
logging.getLogger("mail.log").setLevel(logging.ERROR)
class Keep:
    async def handle_DATA(self, server, session, envelope):
        print(json.dumps({"to": envelope.rcpt_tos, "data": envelope.content.decode("utf-8", "replace")}), flush=True)
        return "250 kept"
with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
Controller(Keep(), hostname="127.0.0.1", port=port).start()
print(f"smtp {port}", flush=True)
while True:
    time.sleep(3600)
'''

checks = Checks("slack")


class Signer:
    """slack_sdk's signing, in the virtual environment's Python, one request at a time."""

    def __init__(self, python):
        self.process = subprocess.Popen([python, "-c", SIGNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def sign(self, body, timestamp, secret=SECRET):
        self.process.stdin.write(json.dumps({"body": body, "timestamp": str(timestamp), "secret": secret}) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


class WebApi:
    """A stand-in of Slack's Web API on a loopback port: every call recorded (method, arguments,
    token); Sam and Sue are people of the workspace T1, the bot is UAPP."""

    USERS = {"USAM": "sam@example.test", "USUE": "sue@example.test"}

    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()
        # Set: every call answers `token_revoked`, as Slack does for a revoked token.
        self.revoked = False
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                method = self.path.rsplit("/", 1)[-1]
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                if self.headers.get("Content-Type", "").startswith("application/json"):
                    arguments = json.loads(body or "{}")
                else:
                    arguments = dict(urllib.parse.parse_qsl(body))
                answer = stand_in.answer(method, arguments, self.headers.get("Authorization", ""))
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api"

    def answer(self, method, arguments, authorization):
        with self.lock:
            self.calls.append((method, arguments, authorization))
            if method == "oauth.v2.access":
                if arguments.get("code") != "sdk-code" or arguments.get("client_secret") != CLIENT_SECRET:
                    return {"ok": False, "error": "invalid_code"}
                return {"ok": True, "access_token": INSTALLED_TOKEN, "token_type": "bot", "bot_user_id": "UAPP",
                        "team": {"id": "T1", "name": "Acme"}}
            if self.revoked:
                return {"ok": False, "error": "token_revoked"}
            if method == "users.conversations":
                return {"ok": True, "channels": [{"id": "CSALES", "name": "sales"}]}
            if method == "auth.test":
                return {"ok": True, "user_id": "UAPP", "team_id": "T1"}
            if method == "users.info":
                email = self.USERS.get(arguments.get("user"), "stranger@example.test")
                return {"ok": True, "user": {"id": arguments.get("user"), "team_id": "T1", "is_email_confirmed": True,
                                             "profile": {"email": email}}}
            if method == "chat.postMessage":
                return {"ok": True, "ts": f"1700000000.{len(self.calls):06d}"}
            return {"ok": True}

    def of(self, method):
        with self.lock:
            return [arguments for name, arguments, _ in self.calls if name == method]

    def wait(self, method, count, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.of(method)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        return self.of(method)


class Unfollowed(urllib.request.HTTPRedirectHandler):
    """Leaves a redirect unfollowed: its status and `Location` are the answer."""

    def redirect_request(self, *args, **kwargs):
        return None


def unfollowed(url, token):
    """The status and `Location` of a GET of `url` with `token`, its redirect not followed."""
    opener = urllib.request.build_opener(Unfollowed)
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with opener.open(request, timeout=20) as answer:
            return answer.status, answer.headers.get("location")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("location")


def revoked_from_the_control_center(python, work, mock_url):
    """A server whose Slack app an admin adds in the Control Center: installed, then turned off
    (audited, the admin mailed) when Slack refuses its token."""
    smtp = Process([python, "-c", SMTP])
    slack = WebApi()
    server = None
    try:
        port = int(smtp.wait_for("smtp ").split()[1])
        env, config, _ = library(work, mock_url)
        with open(config, "a") as file:
            file.write(f'\n[server.smtp]\nhost = "127.0.0.1"\nport = {port}\nsecurity = "none"\n'
                       'from = "Tool library <tools@example.test>"\n')
        subprocess.run([LLMTOOL, "member", "add", "ada@example.test", "--name", "Ada", "--role", "admin"],
                       env=env, check=True, capture_output=True)
        ada = subprocess.run([LLMTOOL, "token", "create", "ada-laptop", "--member", "ada@example.test"],
                             env=env, check=True, capture_output=True, text=True).stdout.strip()
        listen = free_port()
        base = f"http://127.0.0.1:{listen}"
        server = Process([LLMTOOL, "serve", "--listen", f"127.0.0.1:{listen}", "--config", config,
                          "--public-url", base, "--slack-api-url", slack.url], env=env)
        server.wait_for("llmtool serve: http://")
        api = f"{base}/api/v1"
        status, _, body = request(f"{api}/control/slack", {"client_id": "123.456", "client_secret": CLIENT_SECRET,
                                                           "signing_secret": SECRET}, ada, method="PUT")
        checks.check("an admin sets the Slack app's credentials", status == 200 and CLIENT_SECRET not in body, body)
        status, _, body = request(f"{api}/control/slack/install", b"", ada, method="POST")
        state = urllib.parse.parse_qs(urllib.parse.urlparse(json.loads(body)["url"]).query)["state"][0] if status == 200 else ""
        query = urllib.parse.urlencode({"code": "sdk-code", "state": state})
        status, location = unfollowed(f"{base}/slack/oauth/finish?{query}", ada)
        checks.check("\"Add to Slack\" finishes for the admin who started it",
                     status == 303 and location == "/control/integrations?slack=installed", (status, location))
        _, _, body = request(f"{api}/control/slack", token=ada)
        checks.check("the server answers Slack as the installed app", json.loads(body).get("answering") is True, body)

        slack.revoked = True
        status, _, _ = request(f"{api}/slack/channels", token=ada)
        checks.check("a revoked token is refused as Slack not set up", status == 409, status)
        _, _, body = request(f"{api}/control/slack", token=ada)
        shown = json.loads(body)
        checks.check("the app is turned off, saying why",
                     shown["app"]["enabled"] is False and "token_revoked" in (shown["app"]["disabled_reason"] or ""), shown)
        _, _, body = request(f"{api}/audit?action=slack.disable", token=ada)
        checks.check("the audit log has slack.disable", len(json.loads(body)["records"]) == 1, body)
        mail = None
        deadline = time.monotonic() + 20
        while mail is None and time.monotonic() < deadline:
            mail = next((json.loads(line) for line in smtp.lines if line.startswith("{")), None)
            time.sleep(0.1)
        checks.check("the admin is mailed that Slack is off",
                     mail is not None and mail["to"] == ["ada@example.test"] and "Slack is off" in mail["data"]
                     and "token_revoked" in mail["data"], mail)
        checks.check("the mail holds no secret", mail is not None and not any(
            secret in mail["data"] for secret in (CLIENT_SECRET, SECRET, INSTALLED_TOKEN)))
    finally:
        if server:
            server.stop()
        smtp.stop()
        slack.server.shutdown()


def main():
    python = venv_python(WORK, PACKAGES, PROBE, checks.log)
    work = tempfile.mkdtemp(prefix="llmtool-slack-")
    mock = Process([MOCK, "127.0.0.1:0"], env=dict(os.environ, MOCK_LLM_ANSWER=ANSWER))
    signer = Signer(python)
    slack = WebApi()
    server = None
    try:
        mock_url = mock.wait_for("http://")
        env, config, admin = library(work, mock_url)
        for name, value in (("signing-secret", SECRET), ("bot-token", BOT_TOKEN)):
            with open(os.path.join(work, name), "w") as file:
                file.write(value + "\n")
            os.chmod(os.path.join(work, name), 0o600)
        server = Process([LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--config", config,
                          "--slack-signing-secret-file", os.path.join(work, "signing-secret"),
                          "--slack-bot-token-file", os.path.join(work, "bot-token"),
                          "--slack-api-url", slack.url], env=env)
        url = "http://" + server.wait_for("llmtool serve: http://").split("http://", 1)[1].split("/", 1)[0]
        api = f"{url}/api/v1"
        for team in ("sales", "support"):
            request(f"{api}/teams", {"name": team}, admin)
        for email, team in (("sam@example.test", "sales"), ("sue@example.test", "support")):
            status, _, body = request(f"{api}/members", {"email": email, "name": email.split("@")[0], "role": "viewer", "teams": [team]}, admin)
            checks.check(f"{email} is a member of {team}", status == 201, body)
        publish(env, url, admin, work, "poet", "alpha")
        request(f"{api}/tools/poet/tags/sales", None, admin, method="PUT")
        request(f"{api}/tools/poet/tags/all", None, admin, method="DELETE")

        def send(path, body, timestamp=None, secret=SECRET, signed=True, retry=None):
            timestamp = int(time.time()) if timestamp is None else timestamp
            headers = {"Content-Type": "application/json" if body.startswith("{") else "application/x-www-form-urlencoded"}
            if signed:
                signing = signer.sign(body, timestamp, secret)
                headers["X-Slack-Request-Timestamp"] = str(timestamp)
                headers["X-Slack-Signature"] = signing["signature"]
            if retry is not None:
                headers["X-Slack-Retry-Num"] = str(retry)
                headers["X-Slack-Retry-Reason"] = "http_timeout"
            return request(f"{url}{path}", body.encode(), headers=headers)

        def spend(email):
            _, _, body = request(f"{api}/spend?member={urllib.parse.quote(email)}", token=admin)
            return json.loads(body)["totals"]["runs"]

        # Signatures.
        check = json.dumps({"type": "url_verification", "challenge": "sdk-challenge", "token": "x"})
        checks.check("slack_sdk's own check takes its signature", signer.sign(check, int(time.time()))["valid"])
        checks.check("an unsigned event is 401", send("/slack/events", check, signed=False)[0] == 401)
        checks.check("a stale event (ten minutes old) is 401", send("/slack/events", check, timestamp=int(time.time()) - 600)[0] == 401)
        checks.check("an event signed with another secret is 401", send("/slack/events", check, secret="another-secret")[0] == 401)
        status, _, body = send("/slack/events", check)
        checks.check("url_verification is answered", status == 200 and json.loads(body) == {"challenge": "sdk-challenge"}, f"{status} {body}")

        def command(user, text):
            return urllib.parse.urlencode({"command": "/llmtool", "text": text, "user_id": user, "channel_id": "CSALES",
                                           "team_id": "T1", "trigger_id": f"trigger-{user}-{text}"})

        # `/llmtool` lists what the member sees; `/llmtool poet` opens the modal.
        status, _, body = send("/slack/commands", command("USAM", ""))
        checks.check("/llmtool lists poet for Sam", status == 200 and "`poet`" in json.loads(body)["text"], body)
        status, _, body = send("/slack/commands", command("USUE", ""))
        checks.check("/llmtool does not list poet for Sue (another team)", status == 200 and "`poet`" not in json.loads(body)["text"], body)
        send("/slack/commands", command("USAM", "poet"))
        views = slack.wait("views.open", 1)
        checks.check("the modal is opened with views.open", len(views) == 1, views)
        if not views:
            return
        view = views[0]["view"]
        metadata = view["private_metadata"]
        block = view["blocks"][0]["block_id"]
        action = view["blocks"][0]["element"]["action_id"]

        def submission(user):
            payload = {"type": "view_submission", "team": {"id": "T1"}, "user": {"id": user},
                       "view": {"callback_id": view["callback_id"], "private_metadata": metadata,
                                "state": {"values": {block: {action: {"type": "plain_text_input", "value": "tides"}}}}}}
            return urllib.parse.urlencode({"payload": json.dumps(payload)})

        # The view_submission runs the tool as Sam, counted in Sam's spend, posted as a thread.
        status, _, _ = send("/slack/interactivity", submission("USAM"))
        checks.check("the view_submission is acknowledged", status == 200)
        posted = slack.wait("chat.postMessage", 2)
        checks.check("the answer is posted in a thread", len(posted) == 2 and posted[1].get("thread_ts") and ANSWER in json.dumps(posted[1]), posted)
        checks.check("the run is counted in Sam's spend", spend("sam@example.test") == 1)
        thread = posted[1].get("thread_ts") if len(posted) == 2 else None
        tokens = {authorization for name, _, authorization in slack.calls if name == "chat.postMessage"}
        checks.check("the bot's calls carry its token", tokens == {f"Bearer {BOT_TOKEN}"}, tokens)

        # A mention in the thread, sent three times as Slack retries it: one turn, one answer.
        event = json.dumps({"type": "event_callback", "team_id": "T1", "event_id": "EvSdkMention",
                            "event": {"type": "app_mention", "user": "USAM", "text": "<@UAPP> why twice?",
                                      "channel": "CSALES", "ts": "1700000100.000001", "thread_ts": thread}})
        statuses = [send("/slack/events", event, retry=retry)[0] for retry in (None, 1, 2)]
        checks.check("each delivery of the mention is acknowledged", statuses == [200, 200, 200], statuses)
        posted = slack.wait("chat.postMessage", 3)
        # Long enough for a second turn's answer to have been posted, were there one.
        time.sleep(4)
        posted = slack.of("chat.postMessage")
        checks.check("the mention is one posted answer, in the thread", len(posted) == 3 and posted[2].get("thread_ts") == thread, posted)
        checks.check("the mention is one turn, in Sam's spend", spend("sam@example.test") == 2)

        # Sue cannot run poet from Slack, even with its modal's metadata.
        send("/slack/interactivity", submission("USUE"))
        told = slack.wait("chat.postEphemeral", 1)
        checks.check("Sue is told there is no such tool for her", told and told[0].get("user") == "USUE" and "no tool `poet`" in told[0].get("text", ""), told)
        checks.check("nothing is run for Sue", spend("sue@example.test") == 0 and len(slack.of("chat.postMessage")) == 3)
        server.stop()
        os.makedirs(os.path.join(work, "control-center"))
        revoked_from_the_control_center(python, os.path.join(work, "control-center"), mock_url)
    finally:
        if server:
            server.stop()
        signer.stop()
        mock.stop()
        slack.server.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
