"""Planted files for the learned quality scorer, and the scripted teacher that rates them.

``good_*`` files are documented modules with descriptive names; ``junk_*`` files are
valid code with one-letter names, copy-pasted lines and no comments; ``plain_*`` files
sit between (sensible names, no comments). Identifiers come from a seeded vocabulary,
so two files share few 5-word shingles (near dedup keeps them all) and a new seed gives
files the model never saw. ``rate`` is the scripted teacher's rubric: it reads only the
file inside the prompt, so its ratings depend on the code, not on the planted name.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

NOUNS = ["account", "buffer", "cache", "record", "invoice", "sensor", "packet", "ticket", "order", "window",
         "session", "message", "matrix", "vector", "budget", "device", "report", "signal", "tensor", "queue",
         "column", "segment", "profile", "channel", "payload", "cluster", "batch", "entry", "module", "route"]
VERBS = ["load", "parse", "merge", "count", "render", "update", "filter", "encode", "decode", "validate",
         "resolve", "collect", "compute", "normalize", "schedule", "publish", "archive", "select", "rank", "split"]
REASONS = {"good": "meets every rule", "plain": "fails rule 4", "junk": "fails rule 3"}


def _name(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{rng.choice(NOUNS)}"


def _noun(rng: random.Random) -> str:
    return f"{rng.choice(NOUNS)}_{rng.choice(NOUNS)}"


def good_python(rng: random.Random) -> str:
    out = [f'"""Helpers that {rng.choice(VERBS)} {rng.choice(NOUNS)} data for the {rng.choice(NOUNS)} service."""',
           "", "from __future__ import annotations", ""]
    for _ in range(rng.randint(3, 5)):
        name, a, b = _name(rng), _noun(rng), _noun(rng)
        out += [f"def {name}({a}: list[int], {b}: int) -> int:",
                f'    """Return the {rng.choice(NOUNS)} total of {a}, capped by {b}."""',
                f"    # Skip empty {rng.choice(NOUNS)} entries: they carry no {rng.choice(NOUNS)}.",
                f"    total = sum(item for item in {a} if item)",
                f"    return min(total, {b})", ""]
    return "\n".join(out)


def plain_python(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(3, 5)):
        name, a, b = _name(rng), _noun(rng), _noun(rng)
        out += [f"def {name}({a}, {b}):", f"    total = sum(item for item in {a} if item)",
                f"    return min(total, {b})", ""]
    return "\n".join(out)


def junk_python(rng: random.Random) -> str:
    v = [rng.choice("abcdefghxyz") for _ in range(4)]
    out = [f"{v[0]} = {rng.randint(0, 99)}", f"{v[1]} = {rng.randint(0, 99)}"]
    for i in range(rng.randint(4, 7)):
        line = f"{v[2]} = {v[0]} + {v[1]} * {rng.randint(2, 9)}"
        out += [f"def f{i}(x, y):", f"    {line}", f"    {line}", f"    {line}", "    return x", ""]
    return "\n".join(out)


def good_js(rng: random.Random) -> str:
    out = [f"// Helpers that {rng.choice(VERBS)} {rng.choice(NOUNS)} data for the {rng.choice(NOUNS)} view.", ""]
    for _ in range(rng.randint(3, 5)):
        name, a, b = _name(rng), _noun(rng), _noun(rng)
        out += ["/**", f" * Return the {rng.choice(NOUNS)} total of {a}, capped by {b}.", " */",
                f"export function {name}({a}, {b}) {{",
                f"  // Skip empty {rng.choice(NOUNS)} entries: they carry no {rng.choice(NOUNS)}.",
                f"  const total = {a}.filter(Boolean).reduce((sum, item) => sum + item, 0);",
                f"  return Math.min(total, {b});", "}", ""]
    return "\n".join(out)


def plain_js(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(3, 5)):
        name, a, b = _name(rng), _noun(rng), _noun(rng)
        out += [f"export function {name}({a}, {b}) {{",
                f"  const total = {a}.filter(Boolean).reduce((sum, item) => sum + item, 0);",
                f"  return Math.min(total, {b});", "}", ""]
    return "\n".join(out)


def junk_js(rng: random.Random) -> str:
    v = [rng.choice("abcdefghxyz") for _ in range(4)]
    out = [f"var {v[0]} = {rng.randint(0, 99)};", f"var {v[1]} = {rng.randint(0, 99)};"]
    for i in range(rng.randint(4, 7)):
        line = f"{v[2]} = {v[0]} + {v[1]} * {rng.randint(2, 9)};"
        out += [f"function f{i}(x, y) {{", f"  {line}", f"  {line}", f"  {line}", "  return x;", "}", ""]
    return "\n".join(out)


MAKERS = {("python", "py"): (good_python, plain_python, junk_python),
          ("javascript", "js"): (good_js, plain_js, junk_js)}


def planted(seed: int, per_kind: int) -> list[tuple[str, str, str, str]]:
    """(lang, file name, kind, text) for ``per_kind`` files of each kind and language."""
    rng = random.Random(seed)
    out = []
    for (lang, ext), makers in MAKERS.items():
        for kind, make in zip(("good", "plain", "junk"), makers, strict=True):
            out += [(lang, f"{kind}_{seed}_{i}.{ext}", kind, make(rng)) for i in range(per_kind)]
    return out


def plant_repo(root: Path, seed: int, per_kind: int) -> Path:
    """A repository of planted files (one folder per language) with an MIT license."""
    root.mkdir(parents=True)
    (root / "LICENSE").write_text("MIT License\n\nPermission is hereby granted, free of charge, to any person\n")
    for lang, name, _, text in planted(seed, per_kind):
        (root / lang).mkdir(exist_ok=True)
        (root / lang / name).write_text(text + "\n")
    return root


IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def rate(code: str) -> int:
    """The scripted teacher's rubric, points in order, stopping at the first rule failed."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    if not lines:
        return 0
    score = 1
    long = [line for line in lines if len(line) >= 8] or lines
    if len(set(long)) / len(long) < 0.75:  # rule 2: repeated lines
        return score
    score += 1
    idents = IDENT.findall(code)
    if sum(map(len, idents)) / max(1, len(idents)) < 4.0:  # rule 3: names
        return score
    score += 1
    comments = sum(line.startswith(("#", "//", "/**", "*", '"""')) for line in lines)
    if comments / len(lines) < 0.1:  # rule 4: explains itself
        return score
    return score + 2


def scripted_answer(body: dict) -> str:
    """What the fake OpenAI server answers a rating request: JSON under the schema."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    code = user.split("<file>\n", 1)[1].rsplit("\n</file>", 1)[0]
    score = rate(code)
    return json.dumps({"reason": "meets every rule" if score == 5 else f"fails rule {score + 1}", "score": score})
