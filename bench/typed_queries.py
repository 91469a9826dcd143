"""Searches as people type them, from a corpus's own words (bench/registry.py and
bench/search_guard.py): each keystroke a new query, none asked twice, so that none is answered
from the server's read cache."""
import json, os, random, re, unicodedata, urllib.parse


def vocabulary(corpus):
    """The words of the corpus's tools (name, description, usage notes, prompt) as the search
    folds them (lower case, accents off), but for numbers (a tool's `#123`: one tool each, the
    cheapest searches there are)."""
    words = set()
    for name in os.listdir(corpus):
        with open(os.path.join(corpus, name), encoding="utf-8") as source:
            tool = json.load(source)
        meta = tool.get("metadata", {})
        text = " ".join(str(meta.get(key) or "") for key in ("prompt_name", "description", "usage_notes"))
        text = unicodedata.normalize("NFD", (text + " " + tool.get("model_prompt", "")).lower())
        text = "".join(c for c in text if not unicodedata.combining(c))
        words.update(w for w in re.split(r"[\W_]+", text) if w and not w.isdigit())
    return sorted(words)


def typed_queries(words, count, seed, exclude=()):
    """`count` different searches as people type them: phrases of one to three of `words`,
    each keystroke a search (a space alone is none), URL-encoded; none of `exclude`."""
    rnd, seen, queries = random.Random(seed), set(exclude), []
    for _ in range(count * 100):
        if len(queries) >= count:
            break
        phrase = " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 3)))
        for end in range(1, len(phrase) + 1):
            typed = phrase[:end]
            if not typed.endswith(" ") and typed not in seen:
                seen.add(typed)
                queries.append(urllib.parse.quote(typed))
    if len(queries) < count:
        raise SystemExit(f"{len(words)} words make only {len(queries)} different searches, not {count}")
    return queries[:count]
