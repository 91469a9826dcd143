#!/usr/bin/env python3
"""Invites through a real SMTP server: aiosmtpd (PyPI) is started on loopback ports twice, once
with STARTTLS and once with TLS from the first byte, each with a certificate made here and with
authentication required. `llmtool member invite` (over TLS) and `POST
/api/v1/members/{email}/invite` of a running `llmtool serve` (over STARTTLS) send their invites
through them; each message received is parsed by Python's `email` package (sender, recipient,
subject, the one link in its text), and the link's secret signs in once through `POST
/api/v1/session/invite` and never again. A wrong password and an untrusted certificate fail with
a clear error that holds no secret. Exits 1 when a check fails.

aiosmtpd and cryptography are installed under target/invites-py (once; LLMTOOL_INVITES_DIR
overrides).
"""
import email, email.policy, json, os, re, subprocess, sys, tempfile, threading
import urllib.error, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("LLMTOOL_INVITES_DIR", os.path.join(ROOT, "target", "invites-py"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, venv_python, build_binaries  # noqa: E402
from peers import LLMTOOL  # noqa: E402

PACKAGES = ["aiosmtpd==1.4.6", "cryptography==50.0.2"]
USER, PASSWORD = "llmtool-mail", "smtp-password-8231"
PUBLIC_URL = "https://tools.example.test"

# An SMTP server, run by the virtual environment's Python (`python -c SERVER --smtp MODE ...`).
SERVER = r'''
import json, logging, socket, ssl, sys, warnings
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

mode, cert, key, user, password = sys.argv[2:7]
logging.getLogger("mail.log").setLevel(logging.ERROR)
warnings.simplefilter("ignore", DeprecationWarning)

class Keep:
    async def handle_DATA(self, server, session, envelope):
        print(json.dumps({"from": envelope.mail_from, "to": envelope.rcpt_tos,
                          "data": envelope.content.decode("utf-8", "replace")}), flush=True)
        return "250 kept"

def authenticate(server, session, envelope, mechanism, data):
    good = isinstance(data, LoginPassword) and data.login.decode() == user and data.password.decode() == password
    # Not "handled": aiosmtpd itself answers 535 to a failure.
    return AuthResult(success=good, handled=False)

context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
context.load_cert_chain(cert, key)
# aiosmtpd connects to its own port to see it listening: it needs the number beforehand.
with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
options = dict(hostname="127.0.0.1", port=port, authenticator=authenticate, auth_required=True)
if mode == "starttls":
    controller = Controller(Keep(), tls_context=context, require_starttls=True, **options)
else:
    # TLS from the first byte: aiosmtpd cannot tell, so AUTH is allowed without STARTTLS (and
    # its warning that this would be unsafe on a plain connection does not apply).
    warnings.simplefilter("ignore")
    controller = Controller(Keep(), ssl_context=context, auth_require_tls=False, **options)
controller.start()
print(json.dumps({"port": port}), flush=True)
sys.stdin.read()
controller.stop()
'''


def certificate(folder, python):
    """A certificate authority and a certificate it signs for 127.0.0.1 (made by cryptography in
    the environment): the SMTP servers' certificate and key, and the authority's certificate."""
    ca, cert, key = (os.path.join(folder, name) for name in ("ca.pem", "smtp.pem", "smtp.key"))
    make = r'''
import datetime, ipaddress, sys
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
now = datetime.datetime.now(datetime.timezone.utc)
def made(subject, issuer, public, signer, ca):
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public)
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(signer, hashes.SHA256())
ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "llmtool test CA")])
name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
pem = serialization.Encoding.PEM
open(sys.argv[1], "wb").write(made(ca_name, ca_name, ca_key.public_key(), ca_key, True).public_bytes(pem))
open(sys.argv[2], "wb").write(made(name, ca_name, key.public_key(), ca_key, False).public_bytes(pem))
open(sys.argv[3], "wb").write(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
'''
    subprocess.run([python, "-c", make, ca, cert, key], check=True)
    return ca, cert, key


class Smtp:
    """An aiosmtpd server in a child process; `messages` fills as mail arrives."""

    def __init__(self, python, mode, cert, key):
        self.process = subprocess.Popen([python, "-c", SERVER, "--smtp", mode, cert, key, USER, PASSWORD],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = json.loads(self.process.stdout.readline())["port"]
        self.messages = []
        self.arrived = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            with self.arrived:
                self.messages.append(json.loads(line))
                self.arrived.notify_all()

    def wait(self, count, seconds=30):
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.messages) >= count, seconds)
        return self.messages[:count]

    def stop(self):
        self.process.stdin.close()
        self.process.wait(10)


def config(folder, name, port, security, cert, password_env="SMTP_PASSWORD"):
    path = os.path.join(folder, name)
    with open(path, "w") as out:
        out.write(f'[server]\npublic_url = "{PUBLIC_URL}"\n\n[server.smtp]\nhost = "127.0.0.1"\nport = {port}\n'
                  f'security = "{security}"\nusername = "{USER}"\npassword_env = "{password_env}"\n'
                  f'from = "Tool library <tools@example.test>"\nca_file = "{cert}"\n')
    return path


def parsed(message):
    """The message as Python's `email` reads it: sender, recipients, subject, text, link."""
    read = email.message_from_string(message["data"], policy=email.policy.default)
    text = read.get_body(preferencelist=("plain",)).get_content()
    links = re.findall(r"https://\S+/signin/invite\S*", text)
    return read, text, links


def post(url, body, cookie=None):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers, json.loads(refused.read() or b"null")


def get(url, headers):
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"null")


def main():
    checks = Checks("invites")
    build_binaries()
    python = venv_python(WORK, PACKAGES, "import aiosmtpd, cryptography", checks.log)
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "data")
        env = {**os.environ, "LLMTOOL_DATA_DIR": data, "LLMTOOL_NO_LOG": "1", "SMTP_PASSWORD": PASSWORD}

        def llmtool(*args, extra=None):
            return subprocess.run([LLMTOOL, *args], env={**env, **(extra or {})}, capture_output=True, text=True)

        ca, cert, key = certificate(work, python)
        starttls, tls = Smtp(python, "starttls", cert, key), Smtp(python, "tls", cert, key)
        server = None
        try:
            admin = llmtool("token", "create", "ops", "--role", "admin").stdout.strip()
            for email_address, name in [("ivy@example.test", "Ivy Ito"), ("ben@example.test", "Ben Bo")]:
                added = llmtool("member", "add", email_address, "--name", name, "--role", "viewer")
                checks.check(f"member add {email_address}", added.returncode == 0, added.stderr)

            # The CLI, over TLS from the first byte.
            over_tls = config(work, "tls.toml", tls.port, "tls", ca)
            sent = llmtool("member", "invite", "IVY@example.test", "--config", over_tls)
            checks.check("llmtool member invite sends over TLS with AUTH", sent.returncode == 0, sent.stderr)
            checks.check("the CLI prints no link when it mails one", "#" not in sent.stdout + sent.stderr, sent.stderr)
            [message] = tls.wait(1)
            read, text, links = parsed(message)
            checks.check("the envelope goes to the member", message["to"] == ["ivy@example.test"], message["to"])
            checks.check("From is the configured sender", str(read["From"]) == "Tool library <tools@example.test>", read["From"])
            checks.check("To names the member", str(read["To"]) == "Ivy Ito <ivy@example.test>", read["To"])
            checks.check("the subject says what it is", "sign-in link" in str(read["Subject"]), read["Subject"])
            checks.check("one link, to the studio's invite page, with a 256-bit secret after #",
                         len(links) == 1 and re.fullmatch(rf"{re.escape(PUBLIC_URL)}/signin/invite#[0-9a-f]{{64}}", links[0]) is not None,
                         links)
            cli_secret = links[0].split("#", 1)[1] if links else ""

            # The server, over STARTTLS.
            over_starttls = config(work, "starttls.toml", starttls.port, "starttls", ca)
            server = subprocess.Popen([LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--config", over_starttls],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            base = None
            for line in server.stderr:
                if line.startswith("llmtool serve: http://"):
                    base = line.split()[2].removesuffix("/api/v1")
                    break
            checks.check("llmtool serve starts with [server.smtp]", base is not None)
            request = urllib.request.Request(f"{base}/api/v1/members/ben@example.test/invite", method="POST",
                                             headers={"authorization": f"Bearer {admin}"})
            with urllib.request.urlopen(request, timeout=30) as answer:
                invited = json.loads(answer.read())
                checks.check("POST /members/{email}/invite answers 202 without the link",
                             answer.status == 202 and set(invited) == {"email", "expires_at"}, invited)
            [message] = starttls.wait(1)
            _, _, links = parsed(message)
            checks.check("the server's invite arrives over STARTTLS", message["to"] == ["ben@example.test"] and len(links) == 1, message["to"])
            api_secret = links[0].split("#", 1)[1] if links else ""

            # Each link signs in once.
            for who, secret in [("ivy@example.test", cli_secret), ("ben@example.test", api_secret)]:
                status, headers, signed = post(f"{base}/api/v1/session/invite", {"secret": secret})
                cookie = (headers.get("set-cookie") or "").split(";", 1)[0]
                checks.check(f"the link of {who} signs in", status == 200 and signed.get("name") == who, signed)
                status, session = get(f"{base}/api/v1/session", {"cookie": cookie})
                checks.check(f"the session of {who} is theirs, as a viewer",
                             status == 200 and session.get("name") == who and session.get("role") == "viewer", session)
                status, _, again = post(f"{base}/api/v1/session/invite", {"secret": secret})
                checks.check(f"the link of {who} does not sign in twice",
                             status == 400 and "used already" in again.get("detail", ""), again)

            # Failures are clear, and hold no secret.
            wrong = llmtool("member", "invite", "ivy@example.test", "--config", over_tls,
                            extra={"SMTP_PASSWORD": "not-the-password"})
            checks.check("a wrong password fails with exit 2, saying the server refused",
                         wrong.returncode == 2 and "SMTP server" in wrong.stderr and "not-the-password" not in wrong.stderr,
                         wrong.stderr)
            untrusted = os.path.join(work, "untrusted.toml")
            with open(over_tls) as source, open(untrusted, "w") as out:
                out.write("".join(line for line in source if not line.startswith("ca_file")))
            refused = llmtool("member", "invite", "ivy@example.test", "--config", untrusted)
            checks.check("a certificate nobody trusts is refused, saying so, with no secret",
                         refused.returncode == 2 and "certificate" in refused.stderr.lower() and PASSWORD not in refused.stderr,
                         refused.stderr)
            checks.check("nothing else reached the servers", len(tls.messages) == 1 and len(starttls.messages) == 1,
                         [len(tls.messages), len(starttls.messages)])
        finally:
            if server:
                server.kill()
                server.wait()
            starttls.stop()
            tls.stop()
    checks.finish()


if __name__ == "__main__":
    main()
