"""The teacher's part of the tasks build: subtle rewrites (``lm_rewrite``), harder
variants of validated tasks (``evolve``) and problem statements.

Every answer is checked before it is used: a rewrite must parse and differ, a variant's
edits must name functions that exist, a statement must not leak its fix. Answers that
fail a check become a recorded candidate drop or a template statement, never an error.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping

from datagen.config.tasks import TasksRecipe
from datagen.synth.candidates import Candidate, Target, derive_seed
from datagen.synth.emit import Emitted
from datagen.synth.entities import Entity, extract_entities
from datagen.synth.source import is_valid
from datagen.synth.statements import (
    SHOWN_TESTS,
    RepoTokens,
    Statement,
    feature_statement,
    given,
    grouped,
    leak,
    render,
    statement_prompt,
    template_statement,
)
from datagen.teachers import TeacherRequest, TeacherResult

LM_REWRITE = "lm_rewrite_v1"
EVOLVE = "evolve_v1"
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*\n(.*?)```", re.S)
EVOLVE_SCHEMA = {
    "type": "object", "required": ["edits"],
    "properties": {"edits": {"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["path", "qualname", "code"],
        "properties": {"path": {"type": "string"}, "qualname": {"type": "string"}, "code": {"type": "string"}}}}},
}


def _ask(prompt: str, rid: str, seed: int, schema: dict | None = None) -> TeacherRequest:
    return TeacherRequest(id=rid, messages=[{"role": "user", "content": prompt}], seed=seed, json_schema=schema)


def _tokens(result: TeacherResult) -> int:
    return result.usage.prompt_tokens + result.usage.completion_tokens


def code_block(answer: str) -> str | None:
    """The first fenced code block of an answer (or the whole answer when unfenced)."""
    m = _FENCE.search(answer)
    body = m.group(1) if m else answer
    return body if body.strip() else None


def replace_entity(text: str, e: Entity, code: str) -> str | None:
    """``text`` with entity ``e`` replaced by ``code`` (re-indented to its place); None when
    the result does not parse or does not change."""
    lines = text.splitlines(keepends=True)
    first = lines[e.start_line - 1]
    indent = first[: len(first) - len(first.lstrip())]
    body = textwrap.indent(textwrap.dedent(code).strip("\n"), indent) + "\n"
    new = "".join(lines[: e.start_line - 1]) + body + "".join(lines[e.end_line:])
    return new if new != text and is_valid(new, e.lang, e.path) else None


def lm_rewrites(cfg: TasksRecipe, repo: str, targets: list[Target], texts: Mapping[str, str],
                teacher) -> list[Candidate]:
    """Ask the teacher to slip a subtle bug into some covered functions."""
    funcs = [t for t in targets if t.entity.kind in ("function", "method")]
    funcs.sort(key=lambda t: derive_seed(cfg.seed, repo, t.entity.path, t.entity.qualname, LM_REWRITE))
    funcs = funcs[: cfg.synth.lm_rewrites_per_repo]
    requests = []
    for t in funcs:
        e = t.entity
        code = "".join(texts[e.path].splitlines(keepends=True)[e.start_line - 1: e.end_line])
        prompt = render("lm_rewrite", repo=repo, path=e.path, kind=e.kind, lang=e.lang, code=code.rstrip())
        requests.append(_ask(prompt, f"{repo}:{e.path}:{e.qualname}", derive_seed(cfg.seed, repo, e.qualname)))
    out = []
    results = teacher.generate(requests, progress=True) if requests else []
    for t, req, res in zip(funcs, requests, results):
        e = t.entity
        code = code_block(res.text or "") if res.status == "ok" else None
        new = replace_entity(texts[e.path], e, code) if code else None
        why = None
        if new is None:  # recorded as a dropped candidate, with the reason
            why = f"teacher_{res.status}" if res.status != "ok" else (
                "teacher_no_code" if not code else "teacher_code_invalid")
        out.append(Candidate(repo, LM_REWRITE, "lm_rewrite", f"{e.path}::{e.qualname}", req.seed or 0,
                             {e.path: new} if new is not None else {}, t.covering, teacher_tokens=_tokens(res),
                             drop=why))
    return out


def _functions_of(c: Candidate, texts: Mapping[str, str]) -> list[dict]:
    """The clean source of the entities a candidate touches (what evolve may rewrite)."""
    out = []
    for path, buggy in c.changes.items():
        lang = _lang(path)
        if lang is None or path not in texts or buggy is None:
            continue
        old, new = texts[path].splitlines(), buggy.splitlines()
        changed = {i + 1 for i, (a, b) in enumerate(zip(old, new)) if a != b} or {min(len(old), len(new))}
        for e in extract_entities(path, texts[path], lang):
            if e.kind != "class" and any(e.start_line <= n <= e.end_line for n in changed):
                code = "\n".join(old[e.start_line - 1: e.end_line])
                out.append({"path": path, "qualname": e.qualname, "lang": lang, "code": code, "entity": e})
    return out


def _lang(path: str) -> str | None:
    if path.endswith(".py"):
        return "python"
    if path.endswith((".ts", ".tsx")):
        return "typescript"
    return "javascript" if path.endswith((".js", ".mjs", ".cjs", ".jsx")) else None


def evolve(cfg: TasksRecipe, repo: str, kept: list[Candidate], texts: Mapping[str, str], teacher,
           ids: Mapping[str, str]) -> list[Candidate]:
    """``synth.scale`` harder variants of each validated task of ``repo``."""
    jobs = []
    for c in kept:
        funcs = _functions_of(c, texts)
        if not funcs:
            continue
        patch = _bug_diff(c, texts)
        prompt = render("evolve", repo=repo, bug_patch=patch, functions=funcs)
        for k in range(cfg.synth.scale):
            seed = derive_seed(cfg.seed, repo, c.candidate_id, EVOLVE, k)
            jobs.append((c, funcs, k, _ask(prompt, f"{ids[c.candidate_id]}:{k}", seed, EVOLVE_SCHEMA)))
    results = teacher.generate([j[3] for j in jobs], progress=True) if jobs else []
    out = []
    for (c, funcs, k, _), res in zip(jobs, results):
        if res.status != "ok":
            changes, why = {}, f"teacher_{res.status}"
        elif not res.parsed:
            changes, why = {}, "teacher_bad_json"
        else:
            changes, why = _apply_edits(res, funcs, texts)
        out.append(Candidate(repo, EVOLVE, "evolve", c.entity, k, changes, parent_ids=[ids[c.candidate_id]],
                             teacher_tokens=_tokens(res), drop=why))
    return out


def _bug_diff(c: Candidate, texts: Mapping[str, str]) -> str:
    import difflib

    parts = []
    for path, new in sorted(c.changes.items()):
        parts += difflib.unified_diff(texts.get(path, "").splitlines(keepends=True),
                                      (new or "").splitlines(keepends=True), f"a/{path}", f"b/{path}")
    return "".join(parts)


def _apply_edits(res: TeacherResult, funcs: list[dict], texts: Mapping[str, str]
                 ) -> tuple[dict[str, str], str | None]:
    """Apply a variant's function replacements (bottom-up per file, so spans stay valid);
    ``({}, reason)`` when an edit names an unknown function or its code does not fit."""
    known = {(f["path"], f["qualname"]): f["entity"] for f in funcs}
    edits = [(known.get((ed["path"], ed["qualname"])), ed["code"]) for ed in res.parsed[0].get("edits", [])]
    if not edits or any(e is None for e, _ in edits):
        return {}, "teacher_unknown_entity"
    changes: dict[str, str] = {}
    for e, code in sorted(edits, key=lambda x: (x[0].path, -x[0].start_line)):
        new = replace_entity(changes.get(e.path, texts[e.path]), e, code)
        if new is None:
            return {}, "teacher_code_invalid"
        changes[e.path] = new
    return changes, None


def teacher_statements(cfg: TasksRecipe, emitted: list[Emitted], texts: Mapping[str, Mapping[str, str]],
                       tokens: Mapping[str, RepoTokens], teacher,
                       apis: Mapping[str, tuple[list[tuple[str, str]], str]] | None = None,
                       names: Mapping[str, list[str]] | None = None) -> list[Statement]:
    """One statement per task, styles taken in turn; a leaking or failed answer falls back
    to the template (the note says why). A feature task (``apis``: instance id -> its
    interface and the doc comments of its stubbed functions) is asked for as a short
    request to implement it (``statement_feature_request``), its fallback the feature template.
    ``names`` (instance id -> what its failing tests need that only the fix shows) go into
    the prompt, and a statement naming them does not leak."""
    styles = cfg.statement.styles
    apis, names = apis or {}, names or {}
    requests = []
    for i, e in enumerate(emitted):
        r = e.record
        if r.instance_id in apis:
            api, docs = apis[r.instance_id]
            prompt = render("statement_feature_request", repo=r.repo, interface=grouped(api), docs=docs.strip(),
                            names=names.get(r.instance_id, []), failing=r.FAIL_TO_PASS[:SHOWN_TESTS],
                            more=max(0, len(r.FAIL_TO_PASS) - SHOWN_TESTS))
            requests.append(_ask(prompt, r.instance_id, derive_seed(cfg.seed, r.instance_id, "statement")))
            continue
        src = test_source(texts[r.repo], r.FAIL_TO_PASS[0]) if r.FAIL_TO_PASS else ""
        prompt = statement_prompt(styles[i % len(styles)], r.repo, r.FAIL_TO_PASS, e.verdict.failure_output, src,
                                  cfg.statement.max_output_chars, names.get(r.instance_id))
        requests.append(_ask(prompt, r.instance_id, derive_seed(cfg.seed, r.instance_id, "statement")))
    out = []
    results = teacher.generate(requests, progress=True) if requests else []
    for i, (e, res) in enumerate(zip(emitted, results)):
        r = e.record
        e.candidate.teacher_tokens += _tokens(res)
        needed = given(names.get(r.instance_id, []))
        fix_only = tokens[r.repo].fix_only(e.candidate.changes, r.patch) - needed
        text = (res.text or "").strip() if res.status == "ok" else ""
        why = leak(text, r.patch, fix_only) if text else f"teacher {res.status}"
        feature = r.instance_id in apis
        if why is None:
            out.append(Statement(text + "\n", "request" if feature else styles[i % len(styles)]))
        elif feature:
            st = feature_statement(r.repo, apis[r.instance_id][0], r.FAIL_TO_PASS, r.patch, fix_only)
            out.append(Statement(st.text, st.style, note=why))
        else:
            st = template_statement(r.repo, r.FAIL_TO_PASS, e.verdict.failure_output, r.patch, fix_only)
            out.append(Statement(st.text, st.style, note=why))
    return out


def test_source(texts: Mapping[str, str], test_id: str) -> str:
    """The source of a pytest test function named by its node id ('' when not found)."""
    path, _, rest = test_id.partition("::")
    name = rest.split("::")[-1].split("[", 1)[0]
    text = texts.get(path, "")
    m = re.search(rf"^([ \t]*)(?:async\s+)?def {re.escape(name)}\(", text, re.M)
    if not m:
        return ""
    lines = text[m.start():].splitlines()
    indent = len(m.group(1))
    body = [lines[0]]
    for line in lines[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return "\n".join(body).rstrip()
