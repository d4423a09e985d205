"""Readers of a Python repo's dependency files, for the rules in ``python_plan.py``.

Every reader is pure and forgiving: a file that does not parse gives nothing (and a note),
never an exception, because a repo's own files are untrusted input. ``setup.py`` and
``noxfile.py`` are read with ``ast``, never run.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

# Extras, dependency groups and env names that hold what a test run needs.
TEST_WORDS = ("test", "tests", "testing", "dev", "develop", "development", "check", "ci", "unit", "pytest")
_TEST_NAME = re.compile(r"(?i)^(?:" + "|".join(TEST_WORDS) + r")(?:[-_].*)?$|^.*[-_](?:test|tests|testing)$")


def is_test_name(name: str) -> bool:
    """'test', 'tests', 'testing', 'dev', 'test-extra', 'unit_tests' ... (not 'docs', 'all')."""
    return bool(_TEST_NAME.match(name.strip()))


def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def read_ini(path: Path) -> configparser.RawConfigParser | None:
    cp = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        cp.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    return cp


def ini_list(value: str) -> list[str]:
    """A multi-line (or ';'/','-less) INI value as its non-empty, non-comment lines."""
    out = []
    for line in value.splitlines():
        line = line.split(" #")[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def clean_specs(specs: list, project: str = "") -> list[str]:
    """Valid PEP 508 requirement strings, the project itself (a self-extra) left out."""
    out: list[str] = []
    own = _canon(project)
    for spec in specs:
        if not isinstance(spec, str):
            continue
        try:
            req = Requirement(spec.strip())
        except InvalidRequirement:
            continue
        if own and _canon(req.name) == own:
            continue
        out.append(str(req))
    return list(dict.fromkeys(out))


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_names(specs: list[str]) -> set[str]:
    names = set()
    for s in specs:
        try:
            names.add(_canon(Requirement(s).name))
        except InvalidRequirement:
            continue
    return names


def read_requirements(path: Path, root: Path, seen: set[Path] | None = None) -> list[str]:
    """The requirement specs of a requirements file, its ``-r`` includes followed (inside the
    repo); options, ``-e``, local paths and URLs are left out (the working copy is on
    PYTHONPATH; a local path would build the project)."""
    seen = seen if seen is not None else set()
    path = path.resolve()
    if path in seen or not path.is_file() or root.resolve() not in path.parents:
        return []
    seen.add(path)
    out: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    for line in lines:
        line = line.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ", "-r", "-c ")) and not line.startswith("-c"):
            target = line.split(None, 1)[1] if " " in line else line[2:]
            out += read_requirements(path.parent / target.strip(), root, seen)
            continue
        if line.startswith(("-", ".", "/", "file:")) or re.match(r"^[\w+]+://", line):
            continue  # options, local paths and bare URLs (a `name @ url` spec stays)
        out.append(line.split(";")[0].strip() if "--hash" in line else line)
    return clean_specs([s.split(" --hash")[0] for s in out])


def poetry_specs(table: dict) -> list[str]:
    """Poetry's ``{name = "^1.2"}`` tables as PEP 508 specs (caret/tilde as lower bounds)."""
    out = []
    for name, value in (table or {}).items():
        if name.lower() == "python":
            continue
        version, extras = value, []
        if isinstance(value, dict):
            if "path" in value or "git" in value or "url" in value:
                continue
            version, extras = value.get("version", "*"), value.get("extras", [])
        if not isinstance(version, str):
            continue
        version = version.strip()
        if version.startswith(("^", "~")) and not version.startswith("~="):
            version = ">=" + version.lstrip("^~")
        elif version in ("*", ""):
            version = ""
        elif version[0].isdigit():
            version = "==" + version
        extra = f"[{','.join(extras)}]" if extras else ""
        out.append(f"{name}{extra}{version}")
    return clean_specs(out)


def setup_py_calls(path: Path) -> dict:
    """The literal keyword arguments of ``setup(...)`` in a setup.py (module-level names
    assigned a literal are followed); what is not a literal is left out."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return {}
    names: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _literal(node.value, names)
            if value is not None:
                names[node.targets[0].id] = value
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "setup":
            out = {}
            for kw in node.keywords:
                if kw.arg:
                    value = _literal(kw.value, names)
                    if value is not None:
                        out[kw.arg] = value
            return out
    return {}


def _literal(node: ast.AST, names: dict) -> object:
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, names), _literal(node.right, names)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        return None
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(e, names) for e in node.elts]
        return [i for i in items if isinstance(i, str)] if all(isinstance(i, str) for i in items) else None
    if isinstance(node, ast.Dict):
        keys = [_literal(k, names) if k is not None else None for k in node.keys]
        values = [_literal(v, names) for v in node.values]
        return {k: v for k, v in zip(keys, values) if isinstance(k, str) and v is not None}
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def nox_installs(path: Path) -> list[tuple[str, list[str]]]:
    """(session function, literal ``session.install`` args) of every session in a noxfile."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    out = []
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        args: list[str] = []
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            if getattr(call.func, "attr", "") == "install":
                args += [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if args:
            out.append((fn.name, args))
    return out


def split_install_args(args: list[str], root: Path) -> tuple[list[str], list[str]]:
    """tox/nox install arguments -> (requirement specs, extras of the project itself)."""
    specs, extras = [], []
    i = 0
    while i < len(args):
        a = args[i].strip()
        i += 1
        a = a.replace("{toxinidir}/", "").replace("{toxinidir}", ".")
        if a in ("-r", "--requirement") and i < len(args):
            specs += read_requirements(root / args[i].replace("{toxinidir}/", ""), root)
            i += 1
        elif a.startswith("-r"):
            specs += read_requirements(root / a[2:].strip(), root)
        elif re.match(r"^\.(\[[\w,\- ]+\])?$", a) or a.startswith("-e"):
            m = re.search(r"\[([\w,\- ]+)\]", a)
            extras += [e.strip() for e in m.group(1).split(",")] if m else []
        elif not a.startswith("-") and "{" not in a:
            specs.append(a)
    return clean_specs(specs), extras
