#!/usr/bin/env python3
"""llmtool's data-loss prevention (`llmtool scan`) against Presidio's analyzer on one labelled
set: precision and recall per kind of value, and throughput, measured in one run.

usage: bench/dlp.py [SENTENCES=10000] [SEED=42]

The labelled set has two parts, written to target/bench-dlp/:

- SENTENCES sentences from presidio-evaluator's `PresidioSentenceFaker` (its 209 templates and
  Faker providers, seeded with SEED), each labelled with the spans of the values it put in;
- a supplement from this script (`supplement`, seeded with SEED) for what those templates lack:
  national ids with valid check digits (UK NHS, Aadhaar, Spanish DNI/NIE, Brazilian CPF, Korean
  RRN), credentials in URLs, private keys, and API keys in the shapes their providers issue.

Presidio is presidio-analyzer with its default recognisers for English. Its named-entity model
(spaCy's en_core_web_lg) cannot be fetched here, and it only finds names, places and dates,
which llmtool does not look for. So Presidio runs on a blank spaCy English pipeline. Its
pattern recognisers (e-mail, phone, card, IBAN, SSN, IP, the national ids) work the same way
with it, and the missing NER model makes Presidio faster, not slower. Presidio analyzes each
sentence, as an application calls it, after 50 sentences to warm it up; its time is that
loop's. llmtool scans the whole set in one `llmtool scan` (the release build), timed two ways,
each the best of three runs:

- cold: the whole process, from start to exit (reading its rules, compiling the patterns
  and the numbering plans of every country it meets);
- warm: the same scan over the set written twice, less the cold time: what the second copy
  costs once everything is compiled, as Presidio's loop is timed warm.

It times one long line (the secret keywords and a value of issue 31, repeated) of 1, 4 and
16 MB: `llmtool scan`, whole process, best of three, against Presidio's analyze call on the
1 MB line, warm. Time that grows faster than the text shows here first.

It also times one short prompt (a phone number, an e-mail address and a card) as a
command-line user scans it, a whole process each: `llmtool scan` (median of 21) against a
Python process that loads Presidio's analyzer and analyzes it (median of 5).

A finding matches a labelled value of the same kind when their spans overlap. Precision is
matched findings over findings of that kind; recall is matched values over labelled values.

Installs presidio-analyzer and presidio-evaluator once, into target/bench-presidio/. With
DLP_BENCH_SHOW=KIND, also prints what llmtool missed and wrongly found of that kind.
"""
import json, os, random, string, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_server import LLMTOOL, ROOT  # noqa: E402

VENV = os.path.join(ROOT, "target", "bench-presidio")
PYTHON = os.path.join(VENV, "bin", "python")
WORK = os.path.join(ROOT, "target", "bench-dlp")
PACKAGES = ["presidio-analyzer==2.2.366", "presidio-evaluator==0.3.2"]

# Presidio's entity types and llmtool's kinds, where both look for the same thing.
PRESIDIO_KINDS = {
    "EMAIL_ADDRESS": "email",
    "PHONE_NUMBER": "phone",
    "CREDIT_CARD": "payment_card",
    "IBAN_CODE": "iban",
    "US_SSN": "us_ssn",
    "UK_NHS": "uk_nhs",
    "IN_AADHAAR": "in_aadhaar",
    "ES_NIF": "es_dni",
    "ES_NIE": "es_dni",
    "KR_RRN": "kr_rrn",
    "IP_ADDRESS": "ip_address",
}
KINDS = ["email", "phone", "payment_card", "iban", "us_ssn", "uk_nhs", "in_aadhaar", "es_dni",
         "br_cpf", "kr_rrn", "ip_address", "url_credentials", "private_key", "secret"]


def install():
    if not os.path.exists(PYTHON):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    probe = subprocess.run([PYTHON, "-c", "import presidio_analyzer, presidio_evaluator"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([PYTHON, "-m", "pip", "install", "-q", *PACKAGES], check=True)


# --- the labelled set -------------------------------------------------------------------------

GENERATE = r"""
import json, os, sys
from presidio_evaluator.data_generator import PresidioSentenceFaker
count, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
faker = PresidioSentenceFaker("en_US", lower_case_ratio=0.05, random_seed=seed)
with open(out + ".part", "w") as file:
    for sample in faker.generate_new_fake_sentences(num_samples=count):
        spans = [{"type": s.entity_type, "start": s.start_position, "end": s.end_position}
                 for s in sample.spans]
        file.write(json.dumps({"text": sample.full_text, "spans": spans}) + "\n")
os.replace(out + ".part", out)
"""

FAKER_KINDS = {"EMAIL_ADDRESS": "email", "PHONE_NUMBER": "phone", "CREDIT_CARD": "payment_card",
               "IBAN_CODE": "iban", "US_SSN": "us_ssn", "IP_ADDRESS": "ip_address"}


def verhoeff_check(digits):
    d = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
         [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
         [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
         [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
    p = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
         [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
         [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]
    inverse = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]
    c = 0
    for i, digit in enumerate(reversed(digits)):
        c = d[c][p[(i + 1) % 8][digit]]
    return inverse[c]


def values(rng):
    """One generator per supplemented kind: a value as people write it."""
    digits = lambda n: [rng.randrange(10) for _ in range(n)]  # noqa: E731
    chars = lambda alphabet, n: "".join(rng.choice(alphabet) for _ in range(n))  # noqa: E731
    alnum = string.ascii_letters + string.digits

    def nhs():
        while True:
            body = digits(9)
            check = 11 - sum(d * w for d, w in zip(body, range(10, 1, -1))) % 11
            if check != 10:
                n = "".join(map(str, body + [0 if check == 11 else check]))
                return f"{n[:3]} {n[3:6]} {n[6:]}"

    def aadhaar():
        body = [rng.randrange(2, 10)] + digits(10)
        n = "".join(map(str, body + [verhoeff_check(body)]))
        return f"{n[:4]} {n[4:8]} {n[8:]}"

    def dni():
        if rng.random() < 0.7:
            number = rng.randrange(10**7, 10**8)
            return f"{number:08d}{'TRWAGMYFPDXBNJZSQVHLCKE'[number % 23]}"
        prefix = rng.choice("XYZ")
        number = rng.randrange(10**7)
        return f"{prefix}{number:07d}{'TRWAGMYFPDXBNJZSQVHLCKE'[int('XYZ'.index(prefix) * 10**7 + number) % 23]}"

    def cpf():
        body = digits(9)
        for length in (9, 10):
            rest = sum(d * w for d, w in zip(body, range(length + 1, 1, -1))) * 10 % 11
            body.append(0 if rest == 10 else rest)
        n = "".join(map(str, body))
        return f"{n[:3]}.{n[3:6]}.{n[6:9]}-{n[9:]}"

    def rrn():
        year, month, day = rng.randrange(100), rng.randrange(1, 13), rng.randrange(1, 29)
        body = [int(c) for c in f"{year:02d}{month:02d}{day:02d}"] + [rng.randrange(1, 5)] + digits(5)
        weights = [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5]
        body.append((11 - sum(d * w for d, w in zip(body, weights)) % 11) % 10)
        n = "".join(map(str, body))
        return f"{n[:6]}-{n[6:]}"

    def url_credentials():
        user = chars(string.ascii_lowercase, rng.randrange(4, 10))
        password = chars(alnum + "!$*", rng.randrange(10, 20))
        scheme = rng.choice(["https", "postgres", "redis", "ftp", "mongodb+srv"])
        host = rng.choice(["db.internal.example.com", "git.example.org", "10.2.3.4:5432", "cache.example.net"])
        return (user + ":" + password, f"{scheme}://", f"@{host}/main")

    def private_key():
        kind = rng.choice(["RSA ", "EC ", "OPENSSH ", ""])
        lines = [chars(string.ascii_letters + string.digits + "+/", 64) for _ in range(rng.randrange(4, 9))]
        return f"-----BEGIN {kind}PRIVATE KEY-----\n" + "\n".join(lines) + f"\n-----END {kind}PRIVATE KEY-----"

    def secret():
        return rng.choice([
            lambda: "ghp_" + chars(alnum, 36),
            lambda: "github_pat_" + chars(alnum, 22) + "_" + chars(alnum, 59),
            lambda: "AKIA" + chars(string.ascii_uppercase + "234567", 16),
            lambda: "xoxb-" + chars(string.digits, 12) + "-" + chars(string.digits, 13) + "-" + chars(alnum, 24),
            lambda: "sk_live_" + chars(alnum, 24),
            lambda: "glpat-" + chars(alnum + "_-", 20),
            lambda: "npm_" + chars(alnum, 36),
            lambda: "AIza" + chars(alnum + "_-", 35),
            lambda: "sk-ant-api03-" + chars(alnum + "_-", 93) + "AA",
            lambda: "hf_" + chars(string.ascii_letters, 34),
            lambda: "SG." + chars(alnum + "_-", 22) + "." + chars(alnum + "_-", 43),
            lambda: "pypi-AgEIcHlwaS5vcmc" + chars(alnum + "_-", 60),
        ])()

    return {"uk_nhs": nhs, "in_aadhaar": aadhaar, "es_dni": dni, "br_cpf": cpf, "kr_rrn": rrn,
            "url_credentials": url_credentials, "private_key": private_key, "secret": secret}


TEMPLATES = {
    "uk_nhs": ["My NHS number is {}.", "Patient {} was seen on Tuesday.", "Please update the record for {} before Friday."],
    "in_aadhaar": ["Aadhaar: {}", "The applicant's number {} does not match the form.", "Verify {} against the register."],
    "es_dni": ["DNI {} del titular.", "El NIE {} aparece en el contrato.", "Documento: {}"],
    "br_cpf": ["CPF {} cadastrado.", "O cliente {} pediu reembolso.", "Confira o documento {} antes de pagar."],
    "kr_rrn": ["주민등록번호 {} 확인 부탁드립니다.", "The form lists {} as the resident number.", "번호: {}"],
    "url_credentials": ["Connect with {} and run the migration.", "The job clones {} every night.", "DATABASE_URL={}"],
    "private_key": ["Here is the key the server rejects:\n{}\nWhat is wrong with it?", "{}"],
    "secret": ["export API_TOKEN={}", "The build fails with token {} since Monday.", "config: {{\"key\": \"{}\"}}"],
}


def supplement(seed, per_kind=150):
    rng = random.Random(seed)
    makers = values(rng)
    samples = []
    for kind, make in makers.items():
        for _ in range(per_kind):
            template = rng.choice(TEMPLATES[kind])
            value = make()
            if isinstance(value, tuple):  # a URL: only its credentials are the value
                secret, before, after = value
                value_text = before + secret + after
                text = template.format(value_text)
                start = text.index(value_text) + len(before)
                samples.append({"text": text, "spans": [{"type": kind, "start": start, "end": start + len(secret)}]})
                continue
            text = template.format(value)
            start = text.index(value)
            samples.append({"text": text, "spans": [{"type": kind, "start": start, "end": start + len(value)}]})
    return samples


def labelled_set(count, seed):
    os.makedirs(WORK, exist_ok=True)
    faker_file = os.path.join(WORK, f"faker-{count}-{seed}.jsonl")
    if not os.path.exists(faker_file):
        subprocess.run([PYTHON, "-c", GENERATE, str(count), str(seed), faker_file], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples = []
    for line in open(faker_file):
        sample = json.loads(line)
        spans = [{**s, "type": FAKER_KINDS[s["type"]]} for s in sample["spans"] if s["type"] in FAKER_KINDS]
        samples.append({"text": sample["text"], "spans": spans})
    return samples + supplement(seed)


# --- the two scanners -------------------------------------------------------------------------

PRESIDIO = r"""
import json, sys, time, spacy, os
from presidio_analyzer import AnalyzerEngine
from presidio_analyzer.nlp_engine import NlpEngineProvider
work = sys.argv[1]
blank = os.path.join(work, "spacy-blank-en")
if not os.path.exists(blank):
    spacy.blank("en").to_disk(blank)
provider = NlpEngineProvider(nlp_configuration={"nlp_engine_name": "spacy",
                                                "models": [{"lang_code": "en", "model_name": blank}]})
analyzer = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
texts = [json.loads(line)["text"] for line in open(os.path.join(work, "set.jsonl"))]
for text in texts[:50]:
    analyzer.analyze(text=text, language="en")
start = time.perf_counter()
results = [analyzer.analyze(text=text, language="en") for text in texts]
elapsed = time.perf_counter() - start
found = [[{"type": r.entity_type, "start": r.start, "end": r.end, "score": r.score} for r in rs] for rs in results]
json.dump({"seconds": elapsed, "found": found,
           "recognizers": sorted({e for r in analyzer.registry.recognizers for e in r.supported_entities})},
          open(os.path.join(work, "presidio.json"), "w"))
"""


# One prompt, as a command-line user scans it: a whole process each, start to exit.
PROMPT = "Please call me at (415) 555-2671 or write to ana@example.com; my card is 4111 1111 1111 1111.\n"

PRESIDIO_ONE = r"""
import sys, os
from presidio_analyzer import AnalyzerEngine
from presidio_analyzer.nlp_engine import NlpEngineProvider
provider = NlpEngineProvider(nlp_configuration={"nlp_engine_name": "spacy",
                                                "models": [{"lang_code": "en", "model_name": sys.argv[1]}]})
analyzer = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
print(len(analyzer.analyze(text=sys.argv[2], language="en")))
"""


def median_seconds(command, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={**os.environ, "XDG_CONFIG_HOME": "/nonexistent"})
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def one_prompt():
    """Seconds for one short prompt, whole process: llmtool (median of 21), Presidio (of 5)."""
    path = os.path.join(WORK, "prompt.txt")
    with open(path, "w") as file:
        file.write(PROMPT)
    ours = median_seconds([LLMTOOL, "scan", path], 21)
    theirs = median_seconds([PYTHON, "-c", PRESIDIO_ONE, os.path.join(WORK, "spacy-blank-en"), PROMPT], 5)
    return ours, theirs


# The hostile line of issue 31: keywords of the secret rules and a value, repeated on one line.
LONG_LINE_UNIT = "api_key=0123456789abcdef token secret password aws "

PRESIDIO_LONG = r"""
import sys, time
from presidio_analyzer import AnalyzerEngine
from presidio_analyzer.nlp_engine import NlpEngineProvider
provider = NlpEngineProvider(nlp_configuration={"nlp_engine_name": "spacy",
                                                "models": [{"lang_code": "en", "model_name": sys.argv[1]}]})
analyzer = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
analyzer.analyze(text="warm up: call 415 555 2671", language="en")
text = open(sys.argv[2]).read()
start = time.perf_counter()
analyzer.analyze(text=text, language="en")
print(time.perf_counter() - start)
"""


def long_line():
    """Seconds for one line of 1, 4 and 16 MB: `llmtool scan` whole process (best of three),
    and Presidio's analyze call on the 1 MB line (warm, once)."""
    ours = {}
    for mb in (1, 4, 16):
        path = os.path.join(WORK, f"long-line-{mb}mb.txt")
        with open(path, "w") as file:
            file.write((LONG_LINE_UNIT * (mb * 1_000_000 // len(LONG_LINE_UNIT) + 1))[: mb * 1_000_000])
        ours[mb] = scan_seconds(path)[0]
    theirs = subprocess.run([PYTHON, "-c", PRESIDIO_LONG, os.path.join(WORK, "spacy-blank-en"),
                             os.path.join(WORK, "long-line-1mb.txt")],
                            capture_output=True, text=True, check=True).stdout.strip()
    return ours, float(theirs)


def run_presidio(samples):
    with open(os.path.join(WORK, "set.jsonl"), "w") as file:
        for sample in samples:
            file.write(json.dumps({"text": sample["text"]}) + "\n")
    subprocess.run([PYTHON, "-c", PRESIDIO, WORK], check=True, stderr=subprocess.DEVNULL)
    report = json.load(open(os.path.join(WORK, "presidio.json")))
    found = [[{**f, "type": PRESIDIO_KINDS[f["type"]]} for f in fs if f["type"] in PRESIDIO_KINDS]
             for fs in report["found"]]
    covered = {PRESIDIO_KINDS[e] for e in report["recognizers"] if e in PRESIDIO_KINDS}
    return found, report["seconds"], covered


def run_llmtool(samples):
    """One `llmtool scan` of every sample, each on its own lines, separated by blank lines."""
    path = os.path.join(WORK, "set.txt")
    offsets, parts, at = [], [], 0
    for sample in samples:
        offsets.append(at)
        part = sample["text"].encode() + b"\n\n"
        parts.append(part)
        at += len(part)
    with open(path, "wb") as file:
        file.write(b"".join(parts))
    twice = os.path.join(WORK, "set-twice.txt")
    with open(twice, "wb") as file:
        file.write(b"".join(parts) * 2)
    cold, result = scan_seconds(path)
    warm = scan_seconds(twice)[0] - cold
    found = [[] for _ in samples]
    bytes_of = [s["text"].encode() for s in samples]
    import bisect
    for finding in json.loads(result.stdout)["findings"]:
        index = bisect.bisect_right(offsets, finding["start"]) - 1
        base = offsets[index]
        # Back from bytes to the characters Presidio and the labels count in.
        text = bytes_of[index]
        start_char = len(text[: finding["start"] - base].decode(errors="ignore"))
        end_char = len(text[: finding["end"] - base].decode(errors="ignore"))
        found[index].append({"type": finding["kind"], "start": start_char, "end": end_char})
    return found, (cold, warm), os.path.getsize(path)


def scan_seconds(path):
    """The best of three `llmtool scan` runs of `path`, and the last run's result."""
    best = None
    for _ in range(3):
        start = time.perf_counter()
        result = subprocess.run([LLMTOOL, "scan", path, "--format", "json"], capture_output=True,
                                env={**os.environ, "XDG_CONFIG_HOME": "/nonexistent"})
        elapsed = time.perf_counter() - start
        if result.returncode not in (0, 1):
            sys.exit(f"llmtool scan failed: {result.stderr.decode()}")
        best = elapsed if best is None else min(best, elapsed)
    return best, result


# --- scoring --------------------------------------------------------------------------------


def score(samples, found):
    """Per kind: (labelled, found, matched findings, matched labels)."""
    table = {kind: [0, 0, 0, 0] for kind in KINDS}
    overlaps = lambda a, b: a["start"] < b["end"] and b["start"] < a["end"]  # noqa: E731
    for sample, findings in zip(samples, found):
        for label in sample["spans"]:
            table[label["type"]][0] += 1
            if any(f["type"] == label["type"] and overlaps(f, label) for f in findings):
                table[label["type"]][3] += 1
        for finding in findings:
            if finding["type"] not in table:
                continue
            table[finding["type"]][1] += 1
            if any(label["type"] == finding["type"] and overlaps(finding, label) for label in sample["spans"]):
                table[finding["type"]][2] += 1
    return table


def ratio(a, b):
    return f"{a / b:.3f}" if b else "—"


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 42
    install()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "llmtool"], cwd=ROOT, check=True)
    samples = labelled_set(count, seed)
    ours, our_seconds, size = run_llmtool(samples)
    theirs, their_seconds, covered = run_presidio(samples)
    prompt_seconds = one_prompt()
    line_seconds = long_line()
    mine, presidio = score(samples, ours), score(samples, theirs)
    show = os.environ.get("DLP_BENCH_SHOW")
    if show:  # what llmtool missed and wrongly found of one kind, to study
        overlaps = lambda a, b: a["start"] < b["end"] and b["start"] < a["end"]  # noqa: E731
        for sample, findings in zip(samples, ours):
            text = sample["text"]
            for label in (l for l in sample["spans"] if l["type"] == show):
                if not any(f["type"] == show and overlaps(f, label) for f in findings):
                    print("missed:", repr(text[label["start"]:label["end"]]), "in", repr(text[:120]))
            for finding in (f for f in findings if f["type"] == show):
                if not any(l["type"] == show and overlaps(finding, l) for l in sample["spans"]):
                    print("wrong: ", repr(text[finding["start"]:finding["end"]]), "in", repr(text[:120]))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"One run at {commit}: {len(samples)} samples ({count} from PresidioSentenceFaker, seed {seed}), {size / 1e6:.2f} MB\n")
    print("| kind | labelled | llmtool precision | llmtool recall | Presidio precision | Presidio recall |")
    print("|---|---|---|---|---|---|")
    for kind in KINDS:
        labelled, found_n, right, caught = mine[kind]
        _, p_found, p_right, p_caught = presidio[kind]
        p_precision = ratio(p_right, p_found) if kind in covered else "no recogniser"
        p_recall = ratio(p_caught, labelled) if kind in covered else "no recogniser"
        print(f"| {kind} | {labelled} | {ratio(right, found_n)} | {ratio(caught, labelled)} | {p_precision} | {p_recall} |")
    mb = size / 1e6
    print(f"\n| {mb:.2f} MB | llmtool scan | Presidio analyzer (warm) | llmtool against Presidio |")
    print("|---|---|---|---|")
    for name, seconds in zip(["cold (whole process)", "warm (steady state)"], our_seconds):
        print(f"| {name} | {seconds:.3f} s ({mb / seconds:.2f} MB/s) | {their_seconds:.1f} s ({mb / their_seconds:.3f} MB/s) | **{their_seconds / seconds:.0f}x faster** ({seconds / their_seconds:.4f}x the time) |")
    ours_one, theirs_one = prompt_seconds
    print(f"\n| one prompt, {len(PROMPT)} bytes, whole process | llmtool scan | Presidio (start, load, analyze) | llmtool against Presidio |")
    print("|---|---|---|---|")
    print(f"| median | {ours_one * 1000:.1f} ms | {theirs_one:.2f} s | **{theirs_one / ours_one:.0f}x faster** ({ours_one / theirs_one:.4f}x the time) |")
    ours_line, theirs_line = line_seconds
    print(f"\n| one long line of `{LONG_LINE_UNIT.strip()}` | llmtool scan (whole process, best of 3) | Presidio analyze (warm) | llmtool against Presidio |")
    print("|---|---|---|---|")
    for mb, seconds in ours_line.items():
        versus = f"**{theirs_line / seconds:.0f}x faster** ({seconds / theirs_line:.4f}x the time)" if mb == 1 else "—"
        print(f"| {mb} MB | {seconds:.3f} s | {f'{theirs_line:.1f} s' if mb == 1 else '—'} | {versus} |")


if __name__ == "__main__":
    main()
