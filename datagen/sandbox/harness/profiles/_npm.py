"""npm ci past a package the tests do not need: the JS profiles' dependency fallback.

A lock file may pin a tarball its registry no longer serves (``npm ci`` stops at a 404 for one
dev dependency, an eslint config the test command never loads), or a dev dependency from a git
host the machine cannot reach (``github:owner/repo#branch``, a browser-test helper), or one whose
install script fails offline (``npm rebuild`` of a package that downloads a browser). Where every package ``npm ci``
failed for is a direct dependency that nothing of the test run loads (the runner, the test
script, the test files, the runner's and the compilers' config files), the env is installed
without them: they are dropped from ``package.json`` and the lock file (``npm_without.js``),
every other entry of the lock kept, and ``npm ci`` runs again. The plan records it
(``fallback`` ``without <names>``, and a note with npm's own words), and the task's setup
script installs the same way, restoring both files afterwards. A package the tests load is
never dropped: the env fails as before, with npm's error.
"""

from __future__ import annotations

import json
import re
import shlex
from importlib import resources
from pathlib import Path

from datagen.sandbox.harness import protect
from datagen.sandbox.harness.profiles.base import repo_files

WITHOUT = "without "  # the plan's ``fallback``: ``without <name> <name>``
MAX_ROUNDS = 3  # npm ci runs at most this many times more, each without what the last one failed for
NPM_LOG = ".datagen-npm.log"  # the install's output, in the env build's copy
DROP_SCRIPT = ".datagen-npm-without.js"
_LOCKS = ("package-lock.json", "npm-shrinkwrap.json")
_CODE = (".js", ".cjs", ".mjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
# npm's words for a package it could not fetch: "404 Not Found - GET <url>", "404  'name@1.0.0' is
# not in this registry", "404  The requested resource 'name@<url>' could not be found"
_FETCH_FAILED = re.compile(r"\b(?:404|403|E404|E403)\b.*?'(?P<spec>(?:@[^/'\s]+/)?[^@'\s]+)@[^']*'")
_URL = re.compile(r"\b(?:404|403)\b[^\n]*?\bGET (?P<url>\S+)")
_MISSING_FILE = re.compile(r"ENOENT: no such file or directory, open '(?P<path>[^']+)'")  # a file: tarball
# a git or tarball dependency whose host is unreachable: npm warns which package it was fetching
# ("Could not fetch metadata for name@git+ssh://... FetchError: request to <url> failed") and its
# error repeats the url ("npm error network request to <url> failed"); only such fatal urls count
_UNFETCHED = re.compile(r"Could not fetch metadata for (?P<spec>(?:@[^/\s]+/)?[^@\s]+)@\S+ \w*Error: "
                        r"request to (?P<url>\S+) failed")
_FATAL_URL = re.compile(r"^npm (?:error|ERR!) network request to (?P<url>\S+) failed", re.M)
# a package whose install script failed (``npm rebuild``: a download of a browser binary):
# "npm error path <work>/node_modules/<name>" beside "npm error command failed"
_SCRIPT_PATH = re.compile(r"^npm (?:error|ERR!) path (?P<path>\S*?/node_modules/\S+)$", re.M)
_SCRIPT_FAILED = re.compile(r"^npm (?:error|ERR!) command failed$", re.M)
# files of a test run that may name a package: the runner's and the compilers' config
_CONFIG = re.compile(r"^(?:(?:vitest|vite|jest|ava|babel|karma)\.config\.\w+|\.mocharc(?:\.\w+)?|\.babelrc(?:\.\w+)?|"
                     r"tsconfig(?:\.[\w-]+)?\.json|\.swcrc|setup-?tests?\.\w+)$")


def without_script() -> str:
    """The node script that drops dependencies (``npm_without.js``, shipped beside this module)."""
    return resources.files(__package__).joinpath("npm_without.js").read_text(encoding="utf-8")


def logged(argv: list[str]) -> list[str]:
    """``argv`` with its output also kept in ``NPM_LOG`` (read back when it fails)."""
    return ["sh", "-c", f'{shlex.join(argv)} > {NPM_LOG} 2>&1; rc=$?; cat {NPM_LOG}; exit "$rc"']


def failed_packages(output: str, work: Path) -> list[str]:
    """The top-level packages of the lock file whose fetch ``npm ci``'s ``output`` says failed."""
    lock = _lock(work)
    packages = lock.get("packages") if isinstance(lock.get("packages"), dict) else {}
    found = {m["spec"] for m in _FETCH_FAILED.finditer(output)}
    urls = {m["url"].rstrip(".,") for m in _URL.finditer(output)}
    missing = [m["path"] for m in _MISSING_FILE.finditer(output)]
    fatal = {m["url"] for m in _FATAL_URL.finditer(output)}
    found |= {m["spec"] for m in _UNFETCHED.finditer(output) if m["url"] in fatal}
    if _SCRIPT_FAILED.search(output):
        found |= {_top_package(m["path"]) for m in _SCRIPT_PATH.finditer(output)}
    for key, entry in packages.items():
        resolved = entry.get("resolved") if isinstance(entry, dict) else None
        if not key.startswith("node_modules/") or not isinstance(resolved, str):
            continue
        local = resolved.removeprefix("file:") if resolved.startswith("file:") else ""
        if resolved in urls or local and any(p.endswith("/" + local.lstrip("./")) for p in missing):
            found.add(key.removeprefix("node_modules/").split("/node_modules/", 1)[0])
    return sorted(found)


def _top_package(path: str) -> str:
    """The top-level package a ``node_modules`` path is in (``@scope/name`` or ``name``)."""
    parts = path.split("/node_modules/", 1)[1].split("/")
    return "/".join(parts[:2]) if parts[0].startswith("@") else parts[0]


def _lock(work: Path) -> dict:
    for name in _LOCKS:
        try:
            data = json.loads((work / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        return data if isinstance(data, dict) else {}
    return {}


def droppable(src: Path, names: list[str], runner_tool: str) -> tuple[list[str], str]:
    """(``names`` if every one may be dropped, else [], and why not): each must be a direct
    dependency in ``package.json`` that neither the runner, the test script, a test file nor
    a config file of the run names."""
    pkg = _json(src / "package.json")
    direct = {n for f in ("dependencies", "devDependencies", "optionalDependencies")
              for n in (pkg.get(f) or {} if isinstance(pkg.get(f), dict) else {})}
    if not names:
        return [], "npm named no package it could not fetch"
    if missing := [n for n in names if n not in direct]:
        return [], f"{', '.join(missing)} is not a direct dependency of package.json"
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    runner_config = json.dumps({k: v for k, v in pkg.items() if k in ("jest", "mocha", "ava")})
    texts = [str(scripts.get("test") or ""), runner_config]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in _run_files(src)]
    for name in names:
        word = re.compile(rf"(?<![\w@/.-]){re.escape(name)}(?![\w-])")  # in the test script's command
        quoted = re.compile(rf"""['"`]{re.escape(name)}(?:/[^'"`]*)?['"`]""")  # a module a file loads or names
        if name == runner_tool or word.search(texts[0]) or any(quoted.search(t) for t in texts[1:]):
            return [], f"the test run loads {name}"
    return list(names), ""


def _run_files(src: Path, limit: int = 300) -> list[Path]:
    """The repo's test files and the config files of a test run (none under node_modules)."""
    def keep(rel: str) -> bool:
        return bool(_CONFIG.match(rel.rsplit("/", 1)[-1])) or rel.endswith(_CODE) and protect.is_test_file(rel)

    return repo_files(src, keep, limit)


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def dropped_names(fallback: str) -> list[str]:
    """The packages a plan's ``fallback`` (``without a b``) installed without."""
    return fallback.removeprefix(WITHOUT).split() if fallback.startswith(WITHOUT) else []


def setup_lines(install: str, fallback: str) -> list[str]:
    """The setup script's install where the env that validated the task went on without some
    packages: the same drop, ``install``, and ``package.json`` and the lock file restored."""
    names = dropped_names(fallback)
    keep = " ".join(("package.json", *_LOCKS))
    return ["# npm ci failed where this task was validated: the lock file pins "
            f"{', '.join(names)}, which could not be fetched and which the tests do not load. That env",
            "# was installed without it (every other entry of the lock file as it is), and so is this one;",
            "# package.json and the lock file are restored afterwards.",
            f"for f in {keep}; do if [ -f \"$f\" ]; then cp \"$f\" \".datagen-orig-$f\" || exit 1; fi; done",
            f"cat > {DROP_SCRIPT} <<'DATAGEN_DROP_EOF'", without_script().rstrip("\n"), "DATAGEN_DROP_EOF",
            f"node {DROP_SCRIPT} {shlex.join(names)} && {install}; rc=$?; rm -f {DROP_SCRIPT}",
            f"for f in {keep}; do if [ -f \".datagen-orig-$f\" ]; then mv \".datagen-orig-$f\" \"$f\"; fi; done",
            '[ "$rc" = 0 ] || exit 1']


FALLBACK_FILE = "npm-fallback.json"  # in the env folder: what the install went on without, and why


def npm_ci_dropping(src: Path, work: Path, name: str, argv: list[str], env: dict[str, str], step,
                    runner_tool: str) -> dict[str, object]:
    """Run the install ``argv`` in ``work`` (an env build's copy of ``src``); where it fails for
    packages the tests do not load (``droppable``), drop them and run it again, up to
    ``MAX_ROUNDS`` times. Returns ``{"without": [...], "why": npm's words}`` ({} when nothing was
    dropped); a failure it cannot go past is raised as the install's own, with npm's output."""
    dropped: list[str] = []
    said: list[str] = []
    for _ in range(MAX_ROUNDS + 1):
        if step(name, logged(argv), work, env=env, check=False):
            return {"without": dropped, "why": "; ".join(said)} if dropped else {}
        output = (work / NPM_LOG).read_text(encoding="utf-8", errors="replace") if (work / NPM_LOG).is_file() else ""
        failed = [n for n in failed_packages(output, work) if n not in dropped]
        names, refused = droppable(src, failed, runner_tool)
        if not names:
            break
        (work / DROP_SCRIPT).write_text(without_script(), encoding="utf-8")
        step(f"drop {' '.join(names)}", ["node", DROP_SCRIPT, *names], work, env=env)
        dropped += names
        said += [m.group(0).strip() for m in [_URL.search(output) or _FETCH_FAILED.search(output)] if m]
    else:
        refused = f"still failing after {MAX_ROUNDS} packages were dropped"
    why = f"datagen: not installed without them: {refused}"
    step(name, ["sh", "-c", f"cat {NPM_LOG} >&2; echo {shlex.quote(why)} >&2; exit 1"], work, env=env)
    return {}  # not reached: the step above raises
