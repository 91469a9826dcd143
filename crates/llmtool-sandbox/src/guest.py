# The program the sandboxed Python runs (`python -c` this text). It talks to the host in
# JSON lines: it reads the job (the tool's code and the variables) from standard input,
# answers `llm()`, `sql()`, `fetch()` and `search()` calls through the host, and writes the
# result on standard output. The
# tool's own `print` goes to standard error, so that printing is never read as a message.
# (Code that writes to the real standard output can still send messages: only its own run
# is at stake, within its limits.)
import collections
import io
import json
import sys

_to_host = sys.stdout
_from_host = sys.stdin
sys.stdout = sys.stderr
# The tool's own reads of stdin (`input()`) see an empty one: the real one carries answers.
sys.stdin = io.StringIO()


def _send(message):
    _to_host.write(json.dumps(message, ensure_ascii=False, default=str, allow_nan=False))
    _to_host.write("\n")
    _to_host.flush()


class LlmError(Exception):
    """A model call from the tool's code failed; the message says why."""


def llm(prompt, **params):
    """Asks the model the tool runs on, through the host, and returns its answer."""
    if not isinstance(prompt, str):
        raise TypeError("llm() takes the prompt as a string")
    if len(prompt) > 1_000_000:
        raise ValueError("llm() takes a prompt of at most 1,000,000 characters")
    return _ask({"llm": {"prompt": prompt, "params": params}}, LlmError)["answer"]


def _ask(message, error):
    """Sends `message` to the host and reads its reply; its error is raised as `error`."""
    _send(message)
    line = _from_host.readline()
    if not line:
        raise error("the host gave no answer")
    reply = json.loads(line)
    if "error" in reply:
        raise error(reply["error"])
    return reply


class FunctionError(Exception):
    """A call of one of the tool's functions failed or was refused; the message says why."""


def _call(function, arguments):
    return _ask({"call": {"function": function, "arguments": arguments}}, FunctionError)["result"]


def _text(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{name} takes a string")
    if len(value) > 100_000:
        raise ValueError(f"{name} takes at most 100,000 characters")
    return value


def sql(query, database=None):
    """Runs one read-only statement on a database the tool names (query_database) and
    returns its rows as text; `database` may be left out when the tool names one."""
    arguments = {"sql": _text("sql()", query)}
    if database is not None:
        arguments["database"] = _text("sql(database=...)", database)
    return _call("query_database", arguments)


def fetch(url):
    """Fetches a web page (fetch_url) and returns it as readable text."""
    return _call("fetch_url", {"url": _text("fetch()", url)})


def search(query):
    """Searches the web (web_search) and returns the results as text."""
    return _call("web_search", {"query": _text("search()", query)})


def _located(error):
    # The innermost frames only: a runaway recursion leaves millions of them.
    frames = collections.deque(maxlen=20)
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == "<tool_code>":
            frames.append({"line": tb.tb_lineno, "function": code.co_name})
        tb = tb.tb_next
    return list(frames)


def _fail(error):
    kind, message = type(error).__name__, str(error)
    try:
        frames = _located(error)
    except MemoryError:
        frames = []
    error.__traceback__ = None
    _send({"failed": {"type": kind, "message": message, "frames": frames}})


def _main():
    job = json.loads(_from_host.readline())
    if job.get("site"):
        sys.path.insert(0, "/site")
    scope = {
        "__name__": "__tool__",
        "__builtins__": __builtins__,
        "llm": llm,
        "LlmError": LlmError,
        "sql": sql,
        "fetch": fetch,
        "search": search,
        "FunctionError": FunctionError,
    }
    try:
        exec(compile(job["code"], "<tool_code>", "exec"), scope)
        execute = scope.get("execute")
        if not callable(execute):
            _send({"failed": {"type": "NoExecute", "message": "the code defines no execute(variables) function", "frames": []}})
            return
        result = execute(job["variables"])
    except BaseException as error:  # noqa: BLE001 - every way the code ends is reported
        _fail(error)
        return
    if not isinstance(result, str):
        try:
            result = json.dumps(result, ensure_ascii=False)
        except (TypeError, ValueError):
            result = str(result)
    _send({"result": result})


_main()
