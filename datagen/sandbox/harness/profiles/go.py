"""Go modules: ``go test -json ./...``; a subset is ``-run`` on the top-level test names of
the packages that hold them.

Setup (network on) downloads the module's dependencies (``go mod download``) into the env
folder and warms a build cache there (``go test -run ^$ ./...`` compiles every package and
test binary once); each run copies that cache into its private /tmp, so the tests run
offline (``GOPROXY=off``) without compiling the standard library and dependencies again.
Test ids are ``<package import path>::<TestName>[/<subtest>]``.

A repo without ``go.mod`` (GOPATH era) gets one in its environment: the module path from its
import comments (``package uuid // import "github.com/google/uuid"``), else from the imports
its own files make of its own folders, else the folder's name; setup runs ``go mod tidy``
and every run (and the replay's setup) puts that go.mod / go.sum into the working copy.

Line coverage is per test: each package's test binary is built once with ``-cover
-coverpkg=./...`` and run once per top-level test (``-test.run ^Name$
-test.coverprofile``, under ``go tool test2json``), so a line maps to the tests that ran it;
a package with more than ``PER_TEST_MAX`` tests is run whole, its lines under each of its
passing tests.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.harness.profiles._env import cached_env, copy_source
from datagen.sandbox.harness.profiles.base import EnvContext, Profile, ProfileEnv, TestResults, fitting
from datagen.sandbox.harness.profiles.registry import register
from datagen.sandbox.isolation.base import DEFAULT_PATH

if TYPE_CHECKING:
    from datagen.config.sandbox import SandboxLimits
    from datagen.sandbox.isolation.base import Sandbox

_GO_LINE = re.compile(r"^go\s+(\d+(?:\.\d+){0,2})\s*$", re.M)
_TOOLCHAIN_LINE = re.compile(r"^toolchain\s+(go\S+)\s*$", re.M)
_REQUIRE = re.compile(r"^require\b", re.M)
_MODULE_LINE = re.compile(r"^module\s+(\S+)", re.M)
_IMPORT_COMMENT = re.compile(r"^package\s+\w+\s*//\s*import\s+\"([^\"]+)\"", re.M)
_IMPORT_SPEC = re.compile(r"^\s*(?:import\s+)?(?:[\w.]+\s+)?\"([\w.\-~/]+)\"", re.M)
RUN_CACHE = "/tmp/datagen-gocache"
# The packages outside the main module that its packages and tests import, built into the cache.
WARM_DEPS = ("pkgs=$(go list -e -deps -test -f '{{if .Standard}}{{.ImportPath}}{{else}}{{with .Module}}"
             "{{if not .Main}}{{$.ImportPath}}{{end}}{{end}}{{end}}' ./... | grep -v ' ' | sort -u); "
             '[ -z "$pkgs" ] || go build $pkgs')
COVER_DIR = ".datagen-gocover"
PER_TEST_MAX = 400  # top-level tests of one package run one by one under coverage
_SKIP_DIRS = ("vendor", "testdata", ".git", "node_modules")


def go_version() -> str:
    """The local go's version, e.g. '1.19.8' ('' when there is none)."""
    go = shutil.which("go")
    if go is None:
        return ""
    out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True)
    return out.stdout.strip().removeprefix("go")


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def go_request(go_mod: str) -> tuple[str, str]:
    """(``go`` line, ``toolchain`` line) of a go.mod ('' for each it lacks)."""
    go = m.group(1) if (m := _GO_LINE.search(go_mod)) else ""
    toolchain = m.group(1) if (m := _TOOLCHAIN_LINE.search(go_mod)) else ""
    return go, toolchain


@register
class GoProfile(Profile):
    """A Go module at the repo's root (``go.mod``) with ``_test.go`` files."""

    name = "go"
    language = "go"
    source_langs = ("go",)
    tools = {"go": "golang-go"}
    priority = 40
    report = ".datagen-report.jsonl"
    image, image_default = "golang:{version}", "golang:1"
    env_version = 2  # the build cache holds the dependencies' packages only, none of the module's own

    covers_lines = True

    def detect(self, src: Path, paths: list[str]) -> bool:
        """A module at the root, or a GOPATH-era repo: Go test files and no go.mod anywhere
        (a repo whose modules all sit in subfolders is not one module)."""
        if not any(p.endswith("_test.go") for p in paths):
            return False
        return (src / "go.mod").is_file() or not any(p.rsplit("/", 1)[-1] == "go.mod" for p in paths)

    def is_test_file(self, path: str) -> bool:
        return path.endswith("_test.go") or "/testdata/" in f"/{path}"

    def dependency_files(self, src: Path) -> list[str]:
        return [n for n in ("go.mod", "go.sum", "go.work", "go.work.sum") if (src / n).is_file()]

    def plan(self, src: Path) -> EnvPlan:
        have = go_version()
        if not (src / "go.mod").is_file():
            return self._gopath_plan(src, have)
        text = (src / "go.mod").read_text(encoding="utf-8", errors="replace")
        want, toolchain = go_request(text)
        request = toolchain or (f"go{want}" if want else "")
        mismatch, notes, env = None, [], {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
        if request and have and _tuple(request) > _tuple(have):
            mismatch = f"go.mod asks {request}; go{have} here"
            if _tuple(have) >= (1, 21):  # this go can fetch the asked toolchain at setup
                env["GOTOOLCHAIN"] = request if request.startswith("go") else f"go{request}"
                notes.append(f"GOTOOLCHAIN={env['GOTOOLCHAIN']}: the go command fetches it at setup")
        install = []
        if _REQUIRE.search(text):
            install.append(InstallStep(name="go mod download", kind="command", args=["go", "mod", "download"],
                                       origin="go.mod require"))
        return EnvPlan(profile=self.name, toolchain=f"go{have}" if have else "go", toolchain_request=request,
                       toolchain_mismatch=mismatch, install=install, env=env,
                       test_command=["go", "test", "./..."], notes=notes)

    def _gopath_plan(self, src: Path, have: str) -> EnvPlan:
        """The plan of a repo without go.mod: one written into the environment."""
        module, origin = module_path(src)
        minor = ".".join(have.split(".")[:2]) if have else "1.19"
        text = f"module {module}\n\ngo {minor}\n"
        install = [InstallStep(name="go mod tidy", kind="command", args=["go", "mod", "tidy"],
                               origin="go.mod written by datagen (the repo has none)")]
        return EnvPlan(profile=self.name, toolchain=f"go{have}" if have else "go", install=install,
                       env={"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GO111MODULE": "on"},
                       test_command=["go", "test", "./..."], write_files={"go.mod": text},
                       notes=[f"no go.mod (GOPATH era): go.mod written into the environment, module "
                              f"{module} ({origin})"])

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        def build(target: Path, step) -> None:
            work = copy_source(src, target / "work")
            for rel, text in plan.write_files.items():
                (work / rel).write_text(text, encoding="utf-8")
            env = {**plan.env, **self._paths(target), "GOCACHE": str(target / "gocache"),
                   "GOFLAGS": "-modcacherw " + plan.env.get("GOFLAGS", "")}
            for s in plan.install:
                step(s.name, list(s.args), work, env=env)
            if "go.mod" in plan.write_files:  # the module files the environment made
                (target / "modfiles").mkdir(exist_ok=True)
                for rel in ("go.mod", "go.sum"):
                    if (work / rel).is_file():
                        shutil.copyfile(work / rel, target / "modfiles" / rel)
            # compile the packages the module's code and tests import once (the standard library's
            # and the dependencies'), never the module's own: the cache is read by every task's
            # runs, and objects built from the clean tree hold its code and its literals
            step("warm build cache", ["sh", "-c", WARM_DEPS], work, env=env, check=False)
            shutil.rmtree(work, ignore_errors=True)

        target = cached_env(self, src, plan, ctx, build)
        env = {**plan.env, **self._paths(target), "GOPROXY": "off", "GOCACHE": RUN_CACHE}
        return ProfileEnv(self.name, plan, path=target, env=env, ro_paths=(target,))

    @staticmethod
    def _paths(target: Path) -> dict[str, str]:
        return {"GOPATH": str(target / "gopath"), "GOMODCACHE": str(target / "gopath" / "pkg" / "mod"),
                "PATH": DEFAULT_PATH}

    def _prelude(self, env: ProfileEnv) -> str:
        """Shell that warms the run's build cache and puts the environment's go.mod / go.sum
        into a working copy that has none (a GOPATH-era repo)."""
        if env.path is None:
            return ""
        out = f"cp -r {shlex.quote(str(env.path / 'gocache'))} {RUN_CACHE} 2>/dev/null; "
        for rel in ("go.mod", "go.sum"):
            made = shlex.quote(str(env.path / "modfiles" / rel))
            out += f"[ -f {rel} ] || [ ! -f {made} ] || cp {made} {rel}; "
        return out

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        return ["sh", "-c", f"{self._prelude(env)}{shlex.join(go_test_argv(tests))} > {self.report}"]

    def coverage(self, env: ProfileEnv, sandbox: Sandbox, workdir: Path, limits: SandboxLimits,
                 ro_paths: tuple[Path, ...] = ()) -> dict[str, dict[int, list[str]]]:
        """path -> line -> the tests that ran it: each package's test binary built once with
        coverage of every package of the module, then run once per top-level test."""
        script = self._prelude(env) + _COVER_SCRIPT.replace("PER_TEST_MAX", str(PER_TEST_MAX))
        sandbox.run(["sh", "-c", script], workdir, limits, env=self.run_env(env, workdir),
                    ro_paths=(*env.ro_paths, *ro_paths))
        return read_go_coverage(workdir / COVER_DIR, workdir)

    def parse(self, text: str) -> TestResults:
        from datagen.sandbox.harness.parsers import parse_go_json

        return parse_go_json(text)

    def log_text(self, report: str) -> str:
        from datagen.sandbox.harness.parsers import go_output

        return go_output(report)

    def test_files(self, tests: list[str]) -> list[str]:
        return []

    def test_group(self, test: str) -> str:
        """A test function and its subtests (``pkg::TestName/sub`` -> ``pkg::TestName``)."""
        package, sep, name = test.rpartition("::")
        return package + sep + name.split("/", 1)[0]

    # --- replay -------------------------------------------------------------------------
    def setup_commands(self, plan: EnvPlan) -> list[str]:
        lines = [f"[ -f {shlex.quote(rel)} ] || printf %s {shlex.quote(text)} > {shlex.quote(rel)}"
                 for rel, text in sorted(plan.write_files.items())]
        lines += [f"{shlex.join(s.args)} || exit 1" for s in plan.install if s.kind == "command"]
        return [*lines, "go test -vet=off -count=1 -run '^$' ./... >/dev/null 2>&1 || true  # compiles once"]

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        lines = ["export GOPROXY=off", f"{shlex.join(go_test_argv(tests))} > .datagen-eval.jsonl 2>&1",
                 'echo "go test exit $?"', "bad=0"]
        for t in tests:
            package, name = t.split("::", 1)
            # the names as test2json writes them: JSON strings (xxhash's subtest
            # `input="asd"` is "input=\"asd\"" there), with or without Go's HTML escapes
            spellings = dict.fromkeys(f'"Action":"pass","Package":{_json_str(package, h)},"Test":{_json_str(name, h)}'
                                      for h in (False, True))
            patterns = " ".join(f"-e {shlex.quote(e)}" for e in spellings)
            lines.append(f"grep -qF {patterns} .datagen-eval.jsonl || "
                         f"{{ echo {shlex.quote('NOT PASSED: ' + t)}; bad=1; }}")
        return [*lines, "exit $bad"]


def _json_str(text: str, html: bool) -> str:
    """``text`` as Go's encoding/json writes it (``html``: with ``<``, ``>``, ``&`` escaped)."""
    out = json.dumps(text, ensure_ascii=False)
    if html:
        out = out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return out.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def go_test_argv(tests: list[str] | None) -> list[str]:
    """``go test -json`` over ``./...``, or over the packages of ``tests`` with ``-run`` on
    their top-level names (subtests run with their parent). ``-vet=off``: the tests grade a
    task, not ``go vet``'s checks, which ``go test`` runs first and which GOPATH-era code
    often fails under a newer go (nu7hatch/gouuid: a ``%d`` given a string)."""
    cmd = ["go", "test", "-json", "-vet=off", "-count=1"]
    if not tests:
        return [*cmd, "./..."]
    packages = sorted({t.split("::", 1)[0] for t in tests})
    names = sorted({t.split("::", 1)[1].split("/", 1)[0] for t in tests})
    # too long for one command line: the whole packages, then the whole module (read per id)
    return [*cmd, *fitting(["-run", "^(" + "|".join(re.escape(n) for n in names) + ")$", *packages], packages,
                           ["./..."])]


# One sandboxed run: per package with tests, its test binary with coverage of the whole
# module, then each top-level test alone (a package with too many: all at once), each
# run's events (test2json) and cover profile kept in COVER_DIR as <n>.pkg, <n>-<k>.json,
# <n>-<k>.cov.
_COVER_SCRIPT = r"""W=$(pwd); D="$W/.datagen-gocover"; mkdir -p "$D"; n=0
go list -f '{{.ImportPath}} {{.Dir}} {{len .TestGoFiles}} {{len .XTestGoFiles}}' ./... > "$D/packages" 2>/dev/null
while read -r pkg dir a b; do
  [ "$a" = 0 ] && [ "$b" = 0 ] && continue
  n=$((n+1))
  go test -c -vet=off -cover -covermode=set -coverpkg=./... -o "$D/$n.test" "$pkg" \
    </dev/null >/dev/null 2>&1 || continue
  echo "$pkg" > "$D/$n.pkg"
  (cd "$dir" && "$D/$n.test" -test.list '.*') </dev/null > "$D/$n.list" 2>/dev/null
  if [ "$(wc -l < "$D/$n.list")" -gt PER_TEST_MAX ]; then
    (cd "$dir" && go tool test2json -p "$pkg" "$D/$n.test" -test.v -test.coverprofile="$D/$n-all.cov") \
      </dev/null > "$D/$n-all.json" 2>/dev/null
    rm -f "$D/$n.test"; continue
  fi
  k=0
  while read -r t; do
    case "$t" in Test*|Example*|Fuzz*) ;; *) continue;; esac
    k=$((k+1))
    (cd "$dir" && go tool test2json -p "$pkg" "$D/$n.test" -test.v -test.run "^$t\$" \
      -test.coverprofile="$D/$n-$k.cov") </dev/null > "$D/$n-$k.json" 2>/dev/null
  done < "$D/$n.list"
  rm -f "$D/$n.test"
done < "$D/packages"
"""


def read_go_coverage(folder: Path, workdir: Path) -> dict[str, dict[int, list[str]]]:
    """The coverage script's files -> repo-relative path -> line -> passing test ids (each
    run's lines under the tests that passed in it)."""
    from datagen.sandbox.harness.parsers import ReportError, parse_go_json

    module = ""
    if (m := _MODULE_LINE.search(_read(workdir / "go.mod"))) is not None:
        module = m.group(1)
    out: dict[str, dict[int, set[str]]] = {}
    for cov in sorted(folder.glob("*-*.cov")):
        try:
            passed = [t for t, st in parse_go_json(_read(cov.with_suffix(".json"))).items() if st == "pass"]
        except ReportError:
            continue
        if not passed:
            continue
        for path, lines in cover_profile_lines(_read(cov), module).items():
            per_line = out.setdefault(path, {})
            for line in lines:
                per_line.setdefault(line, set()).update(passed)
    return {p: {n: sorted(t) for n, t in sorted(lines.items())} for p, lines in sorted(out.items())}


def cover_profile_lines(text: str, module: str) -> dict[str, set[int]]:
    """A ``-coverprofile`` (``mode: set``; ``<import path>/file.go:l1.c1,l2.c2 stmts count``)
    -> repo-relative path -> lines of the blocks that ran (files outside ``module`` left out)."""
    out: dict[str, set[int]] = {}
    for line in text.splitlines():
        m = re.match(r"^(.+\.go):(\d+)\.\d+,(\d+)\.\d+ \d+ (\d+)$", line.strip())
        if m is None or m.group(4) == "0":
            continue
        file = m.group(1)
        if module and file.startswith(module + "/"):
            rel = file[len(module) + 1:]
        elif module and file == module:
            continue
        else:
            continue
        out.setdefault(rel, set()).update(range(int(m.group(2)), int(m.group(3)) + 1))
    return out


def module_path(src: Path) -> tuple[str, str]:
    """(module path, where it came from) of a repo without go.mod: an import comment
    (``package x // import "example.com/x/sub"`` in ``sub/`` gives ``example.com/x``), else
    the prefix under which the repo's own files import its folders, else the path by which
    the root's external tests (``package x_test``) import the root package, else its folder
    name."""
    files = [p for p in sorted(src.rglob("*.go"))
             if not any(part in _SKIP_DIRS for part in p.relative_to(src).parts[:-1])]
    for path in files:
        if path.name.endswith("_test.go"):
            continue
        if (m := _IMPORT_COMMENT.search(_read(path)[:4000])) is not None:
            rel = path.parent.relative_to(src).as_posix()
            given = m.group(1)
            if rel == ".":
                return given, f"import comment in {path.relative_to(src).as_posix()}"
            if given.endswith("/" + rel):
                return given[: -len(rel) - 1], f"import comment in {path.relative_to(src).as_posix()}"
    folders = {p.parent.relative_to(src).as_posix() for p in files} - {"."}
    prefixes: dict[str, int] = {}
    for path in files:
        for imp in _imports(_read(path)):
            for folder in folders:
                if imp.endswith("/" + folder) and "." in imp.split("/", 1)[0]:
                    prefix = imp[: -len(folder) - 1]
                    prefixes[prefix] = prefixes.get(prefix, 0) + 1
    if prefixes:
        best = sorted(prefixes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        return best, "the prefix under which its own files import its folders"
    if (own := _root_test_import(src, [p for p in files if p.parent == src])) is not None:
        return own, "the path its root's external tests import it by"
    name = re.sub(r"[^\w.\-~]", "-", src.resolve().name) or "repo"
    return name, "the folder name"


_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)


def _root_test_import(src: Path, root_files: list[Path]) -> str | None:
    """The import path by which the root folder's external test package (``package x_test``)
    imports package ``x``: a non-standard path (a dot in its first element) that ends in ``x``
    or in the repo's folder name (``github.com/nu7hatch/gouuid`` for ``package uuid``), or the
    only non-standard import of such a file that uses ``x.``; None when no file says."""
    names = {m.group(1) for p in root_files if not p.name.endswith("_test.go")
             if (m := _PACKAGE.search(_read(p))) is not None}
    if len(names) != 1:
        return None
    (pkg,) = names
    found: set[str] = set()
    for path in root_files:
        text = _read(path)
        m = _PACKAGE.search(text)
        if not path.name.endswith("_test.go") or m is None or m.group(1) != f"{pkg}_test":
            continue
        outside = [imp for imp in _imports(text) if "." in imp.split("/", 1)[0]]
        named = [imp for imp in outside if imp.rsplit("/", 1)[-1] in (pkg, src.resolve().name)]
        if named:
            found.update(named)
        elif len(outside) == 1 and re.search(rf"\b{pkg}\.", text):
            found.add(outside[0])
    return sorted(found)[0] if len(found) == 1 else None


def _imports(text: str) -> list[str]:
    """Import paths of a Go file (its import declarations only)."""
    out: list[str] = []
    for block in re.findall(r"^import\s*\((.*?)^\)", text, re.M | re.S):
        out += _IMPORT_SPEC.findall(block)
    out += re.findall(r"^import\s+(?:[\w.]+\s+)?\"([^\"]+)\"", text, re.M)
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
