"""JavaScript / TypeScript suites: node:test, jest, vitest, mocha and ava.

The runner is read from ``package.json`` (the word in ``scripts.test``, else the first of
vitest, jest, mocha, ava among the dependencies). Dependencies are installed at setup with
the lock file's package manager (``npm ci --ignore-scripts && npm rebuild`` / ``pnpm install
--frozen-lockfile`` / ``yarn install --frozen-lockfile``, ``npm install`` without a lock file)
into the env folder; every test run's working copy gets a ``node_modules`` folder of its own
whose entries are symlinks into it (read-only; ``module_links``). A repo that commits its
own ``node_modules`` is used as it is. Tools run as ``node_modules/.bin/<tool>``, the same
path inside datagen and in the replay scripts.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from datagen.config.sandbox import SandboxLimits
from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.harness import protect
from datagen.sandbox.harness.checks import check_text
from datagen.sandbox.harness.profiles._env import cached_env, copy_source
from datagen.sandbox.harness.profiles._npm import FALLBACK_FILE, WITHOUT, dropped_names, npm_ci_dropping, setup_lines
from datagen.sandbox.harness.profiles.base import (
    IDS_FILE,
    EnvContext,
    Profile,
    ProfileEnv,
    TestResults,
    fitting,
    ids_file,
    read_json,
    repo_files,
)
from datagen.sandbox.harness.profiles.registry import register
from datagen.sandbox.isolation.base import DEFAULT_PATH, Sandbox

V8_COVERAGE = ".datagen-v8-coverage"  # NODE_V8_COVERAGE's folder in a coverage run's copy
MOCHA_STDOUT = ".datagen-mocha-stdout"  # an old mocha's json report, printed on stdout
JS_RUNNERS = ("vitest", "jest", "mocha", "ava")  # looked up in this order among the dependencies
LOCK_FILES = (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("package-lock.json", "npm"),
              ("npm-shrinkwrap.json", "npm"))
# npm: the project's own lifecycle scripts (``prepare``: often ``tsc --build``) are not run,
# the dependencies' ones are (``npm rebuild``). A replay installs into the buggy tree, where
# a build step would fail on the bug before any test ran (jshttp/content-type's ``prepare``).
# A package whose tests load its build output runs its build before each test run instead,
# going on when it fails (``build_plan``).
_INSTALL = {
    "npm": ["sh", "-c", "npm ci --no-audit --no-fund --ignore-scripts && npm rebuild"],
    "npm-nolock": ["sh", "-c",
                   "npm install --no-audit --no-fund --no-package-lock --ignore-scripts && npm rebuild"],
    "pnpm": ["corepack", "pnpm", "install", "--frozen-lockfile"],
    "yarn": ["corepack", "yarn", "install", "--frozen-lockfile"],
}
# The install command of a pnpm / yarn lock file, tried through corepack first and, when
# corepack cannot fetch the manager (here: "No compatible signature found in package
# metadata" from a registry mirror that serves no signatures), with the same version
# installed from the npm registry into a folder of its own. The lock file is honoured
# either way (--frozen-lockfile; yarn 2+: --immutable).
_FALLBACK = (
    'corepack {spec} --version >/dev/null 2>&1 && exec corepack {spec} install {frozen}; '
    'pm="${{HOME:-/tmp}}/.datagen-pm/{spec}"; '
    '[ -x "$pm/node_modules/.bin/{tool}" ] || {{ mkdir -p "$pm" && echo {{}} > "$pm/package.json" && '
    '(cd "$pm" && npm install --no-audit --no-fund --no-package-lock {package} >&2); }} || exit 1; '
    'exec "$pm/node_modules/.bin/{tool}" install {frozen}'
)
# Not ``npm install -g --prefix``: npm reads its global npmrc under the prefix, so a
# site's ``cafile`` there (a TLS-inspecting proxy's CA) would be lost.


def module_links(modules: Path) -> dict[str, str]:
    """A working copy's ``node_modules``: a folder of its own holding one symlink per entry of
    the env's (read-only) ``node_modules``. Tools write beside the packages (vite bundles an
    ES-module ``vitest.config.js`` into ``node_modules/.vite-temp``, vitest keeps its cache in
    ``node_modules/.vite``): in a copy's own folder they can, and the env stays untouched."""
    return {f"node_modules/{entry.name}": str(entry) for entry in sorted(modules.iterdir())}


def package_json(src: Path) -> dict:
    data = read_json(src / "package.json")
    return data if isinstance(data, dict) else {}


def js_runner(src: Path) -> str | None:
    """The JS test runner ``package.json`` names: ``node`` for ``node --test``, else one of
    ``JS_RUNNERS``; None when it names none."""
    pkg = package_json(src)
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    script = scripts.get("test") if isinstance(scripts.get("test"), str) else ""
    found = [(m.start(), name) for name in JS_RUNNERS if (m := re.search(rf"(?<![\w-]){name}(?![\w-])", script))]
    if m := re.search(r"\bnode\b[^&|;]*--test\b", script):
        found.append((m.start(), "node"))
    if found:
        return min(found)[1]
    deps = {**_deps(pkg, "dependencies"), **_deps(pkg, "devDependencies")}
    return next((name for name in JS_RUNNERS if name in deps), None)


def _deps(pkg: dict, key: str) -> dict:
    value = pkg.get(key)
    return value if isinstance(value, dict) else {}


def package_manager(src: Path) -> tuple[str, str]:
    """(install flavour, lock file) of the repo: ``npm-nolock`` when it has no lock file."""
    for name, manager in LOCK_FILES:
        if (src / name).is_file():
            return manager, name
    return "npm-nolock", ""


def manager_spec(src: Path, manager: str) -> tuple[str, str, str]:
    """(``name@version`` for corepack, the npm package that provides it, the frozen-lock flag)
    of the repo's pnpm or yarn: ``packageManager`` in package.json, else the version the lock
    file's format implies (pnpm lockfileVersion 9 -> pnpm 9, 6 -> 8, 5 -> 7; a yarn v1 lock
    -> yarn 1, a Berry lock -> yarn 4)."""
    given = str(package_json(src).get("packageManager") or "")
    m = re.fullmatch(rf"{manager}@(\d[\w.\-]*)(?:\+.*)?", given.strip())
    version = m.group(1) if m else ""
    lock = (src / ("pnpm-lock.yaml" if manager == "pnpm" else "yarn.lock"))
    head = lock.read_text(encoding="utf-8", errors="replace")[:2000] if lock.is_file() else ""
    if not version and manager == "pnpm":
        lv = re.search(r"^lockfileVersion:\s*'?(\d+)", head, re.M)
        version = {"9": "9", "6": "8", "5": "7"}.get(lv.group(1) if lv else "", "9")
    if not version:
        version = "4" if "__metadata:" in head else "1"
    if manager == "pnpm":
        return f"pnpm@{version}", f"pnpm@{version}", "--frozen-lockfile"
    if version.split(".")[0] == "1":
        return f"yarn@{version}", f"yarn@{version}", "--frozen-lockfile"
    return f"yarn@{version}", f"@yarnpkg/cli-dist@{version}", "--immutable"


def install_argv(src: Path, manager: str) -> list[str]:
    """The install step's argv for the repo's package manager (see ``_FALLBACK``)."""
    if manager not in ("pnpm", "yarn"):
        return list(_INSTALL[manager])
    spec, package, frozen = manager_spec(src, manager)
    script = _FALLBACK.format(spec=spec, tool=manager, package=package, frozen=frozen)
    return ["sh", "-c", script]


def site_ca() -> dict[str, str]:
    """The host's CA variables (a site's own CA, e.g. a TLS-inspecting proxy's), for the
    installers that do not read npm's ``cafile`` (pnpm, yarn, corepack)."""
    return {k: os.environ[k] for k in ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR") if os.environ.get(k)}


def node_version() -> str:
    """The local node's version without the ``v`` ('' when there is none)."""
    node = shutil.which("node")
    if node is None:
        return ""
    out = subprocess.run([node, "--version"], capture_output=True, text=True)
    return out.stdout.strip().lstrip("v")


def satisfies(version: str, request: str) -> bool | None:
    """Whether ``version`` (e.g. '20.20.2') meets a simple ``engines.node`` range ('>=18',
    '^20', '20.x', '18 || 20'); None when the range is beyond these rules."""
    try:
        major = int(version.split(".")[0])
    except ValueError:
        return None
    verdicts = []
    for alt in request.split("||"):
        m = re.fullmatch(r"\s*(>=|>|\^|~|=)?\s*v?(\d+)(?:\.[\dx*]+)*\s*(?:<\s*(\d+)\S*)?\s*", alt)
        if not m:
            return None
        op, want, below = m.group(1) or "", int(m.group(2)), m.group(3)
        ok = major >= want if op in (">=",) else major > want if op == ">" else major == want
        if below is not None:
            ok = ok and major < int(below)
        verdicts.append(ok)
    return any(verdicts)


class JsProfile(Profile):
    """What every JS runner shares: detection by ``js_runner``, the package-manager env."""

    language = "javascript"
    source_langs = ("javascript", "typescript")
    tools = {"node": "nodejs", "npm": "npm"}
    env_tools = ("corepack",)
    priority = 20
    report = ".datagen-report.json"
    image, image_default = "node:{version}", "node:lts"
    tool = ""  # the package whose bin runs the tests (node_modules/.bin/<tool>)

    def detect(self, src: Path, paths: list[str]) -> bool:
        return (src / "package.json").is_file() and js_runner(src) == self.name

    def looks_for(self) -> str:
        return f"a package.json whose test script (or dependencies) names {self.name}"

    def task_language(self, src: Path | None = None) -> str:
        """typescript when the repo's own sources are mostly .ts / .tsx files."""
        if src is None:
            return self.language
        counts = {"ts": 0, "js": 0}
        for path in src.rglob("*"):
            rel = path.relative_to(src).as_posix()
            if "node_modules" in rel.split("/") or rel.endswith((".d.ts", ".min.js")) or self.is_test_file(rel):
                continue
            if path.suffix in (".ts", ".tsx", ".mts", ".cts"):
                counts["ts"] += 1
            elif path.suffix in (".js", ".jsx", ".mjs", ".cjs"):
                counts["js"] += 1
        return "typescript" if counts["ts"] > counts["js"] else "javascript"

    def dependency_files(self, src: Path) -> list[str]:
        return [n for n in ("package.json", *(name for name, _ in LOCK_FILES)) if (src / n).is_file()]

    def plan(self, src: Path) -> EnvPlan:
        pkg = package_json(src)
        request = str((pkg.get("engines") or {}).get("node", "")) if isinstance(pkg.get("engines"), dict) else ""
        version = node_version()
        mismatch = None
        if request and version and satisfies(version, request) is False:
            mismatch = f"engines.node asks {request!r}; node {version} here"
        notes, install = [], []
        build = build_plan(src, pkg, notes)
        has_deps = bool(_deps(pkg, "dependencies") or _deps(pkg, "devDependencies"))
        if (src / "node_modules").is_dir():
            notes.append("node_modules is in the repo: used as it is, nothing installed")
        elif has_deps:
            manager, lock = package_manager(src)
            argv = install_argv(src, manager)
            name = {"npm": "npm ci", "npm-nolock": "npm install"}.get(manager, f"{manager} install")
            install.append(InstallStep(name=name,
                                       kind="command", args=argv, origin=lock or "package.json (no lock file)"))
        return EnvPlan(profile=self.name, toolchain=f"node{version}" if version else "node",
                       toolchain_request=request, toolchain_mismatch=mismatch, install=install,
                       test_command=self.suite_argv(), build=build, notes=notes)

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        if not plan.install:
            return ProfileEnv(self.name, plan, env={"PATH": f"node_modules/.bin:{DEFAULT_PATH}"})

        def build(target: Path, step) -> None:
            work = copy_source(src, target / "work", skip=(".git", "node_modules"))
            env = {"npm_config_cache": str(target / ".npm"), "COREPACK_HOME": str(target / ".corepack"),
                   "HOME": str(target / ".home"), "CI": "1", **site_ca()}
            went_on: dict[str, object] = {}
            for s in plan.install:
                if s.args == _INSTALL["npm"]:  # npm ci past packages the tests do not load (``_npm``)
                    went_on = npm_ci_dropping(src, work, s.name, list(s.args), env, step, self.tool or self.name)
                else:
                    step(s.name, list(s.args), work, env=env)
            if went_on:
                (target / FALLBACK_FILE).write_text(json.dumps(went_on, sort_keys=True), encoding="utf-8")
            modules = work / "node_modules"
            if not modules.is_dir():
                modules.mkdir()
            modules.rename(target / "node_modules")
            for leftover in ("work", ".npm", ".corepack", ".home"):
                shutil.rmtree(target / leftover, ignore_errors=True)

        target = cached_env(self, src, plan, ctx, build)
        if (target / FALLBACK_FILE).is_file():
            went_on = json.loads((target / FALLBACK_FILE).read_text(encoding="utf-8"))
            names = " ".join(went_on["without"])
            plan = plan.model_copy(update={"fallback": WITHOUT + names, "notes": [
                *plan.notes, f"npm ci could not fetch {names} ({went_on['why']}) and the tests load nothing of it: "
                "installed without it, every other entry of the lock file as it is"]})
        return ProfileEnv(self.name, plan, path=target, env={"PATH": f"{target}/node_modules/.bin:{DEFAULT_PATH}",
                                                             "CI": "1"},
                          ro_paths=(target,), links=module_links(target / "node_modules"))

    def read_report(self, workdir: Path, run) -> str | None:
        text = super().read_report(workdir, run)
        return text.replace(f"{workdir}/", "") if text is not None else None

    def coverage(self, env: ProfileEnv, sandbox: Sandbox, workdir: Path, limits: SandboxLimits,
                 ro_paths: tuple[Path, ...] = ()) -> dict[str, dict[int, list[str]]]:
        """The lines the suite runs (V8's counters, ``NODE_V8_COVERAGE``: the runners that run
        tests in node's own processes and workers, not jest's or vitest's module sandboxes),
        each under every test that passed. Per-suite, not per-test: what it buys is that no
        candidate lands in code no test runs; a candidate is then checked by the whole suite."""
        if not self.covers_lines:
            return {}
        from datagen.sandbox.harness.profiles._v8 import covered_lines
        from datagen.sandbox.harness.runners import run_profile

        folder = workdir / V8_COVERAGE
        run = run_profile(self, env, sandbox, workdir, limits, None, ro_paths, {"NODE_V8_COVERAGE": str(folder)})
        passed = sorted(t for t, status in run.results.items() if status == "pass")
        if not passed:
            return {}
        return {path: dict.fromkeys(sorted(lines), passed) for path, lines in covered_lines(folder, workdir).items()}

    def suite_argv(self) -> list[str]:
        """The suite's command as a person types it in the repo."""
        return [f"node_modules/.bin/{self.tool}"]

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        """The runner's argv (``runner_argv``), after the plan's ``build`` where it has one: a
        package whose tests load its build output is built from the copy's own (patched) code."""
        run = self.runner_argv(env, workdir, tests)
        if not env.plan.build:
            return run
        return ["sh", "-c", f'{build_line(env.plan.build)}; exec "$@"', "sh", *run]

    def runner_argv(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        """The argv that runs ``tests`` with the repo's runner and writes the report."""
        raise NotImplementedError

    # --- replay -------------------------------------------------------------------------
    def setup_commands(self, plan: EnvPlan) -> list[str]:
        lines = []
        for s in (s for s in plan.install if s.kind == "command"):
            if s.args == _INSTALL["npm"] and dropped_names(plan.fallback):  # as the validating env went on
                lines += setup_lines(shlex.join(s.args), plan.fallback)
            else:
                lines.append(f"{shlex.join(s.args)} || exit 1")
        return lines

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        """Run the subset with the repo's runner into the report, then a few lines of node
        check that every listed test passed."""
        run = shlex.join(self.runner_argv(ProfileEnv(self.name, plan), Path("."), tests))
        build = [build_line(plan.build, show=True)] if plan.build else []
        return ['export CI=1 PATH="$PWD/node_modules/.bin:$PATH"', "rm -f " + shlex.quote(self.report), *build,
                f"{run} > .datagen-eval.log 2>&1; echo \"runner exit $?\"; tail -n 40 .datagen-eval.log",
                *check_lines(self.name, self.report, tests)]


BUILD_SCRIPTS = ("build", "prepare", "pretest")  # the package's own build, the first of these scripts
BUILD_LOG = ".datagen-build.log"  # the build's output, in the working copy
# a relative module a file loads: require('../dist/index'), import ... from './x.js', import('./y')
_RELATIVE_LOAD = re.compile(r"""(?:\brequire\s*\(\s*|\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)"""
                            r"""['"](\.{1,2}/[^'"\n]+)['"]""")
_RESOLVE = ("", ".js", ".cjs", ".mjs", ".json", ".ts", ".tsx", ".mts", ".cts", ".jsx",
            "/index.js", "/index.cjs", "/index.mjs", "/index.ts", "/package.json")
_SCANNED = 300  # test files read for what they load
_CODE_EXTS = (".js", ".cjs", ".mjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")


def missing_build_output(src: Path, is_test_file) -> str:
    """``file: module`` for the first relative module a JS test file loads that the checkout
    does not hold (``test/a.test.js: ../dist/index``, the package's build output); '' when none."""
    for path in repo_files(src, lambda rel: rel.endswith(_CODE_EXTS) and is_test_file(rel), _SCANNED):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in _RELATIVE_LOAD.finditer(text):
            if not _resolves(path.parent / m.group(1)):
                return f"{path.relative_to(src).as_posix()}: {m.group(1)}"
    return ""


def _resolves(target: Path) -> bool:
    """Whether a relative module exists as node or a TypeScript runner finds it (``./a.js`` may
    name ``a.ts``: TypeScript's ESM imports spell the compiled file's name)."""
    stem, ext = os.path.splitext(str(target))
    spellings = [str(target)] + ([stem] if ext in (".js", ".mjs", ".cjs", ".jsx") else [])
    return any(Path(f"{s}{e}").exists() for s in spellings for e in _RESOLVE)


def build_plan(src: Path, pkg: dict, notes: list[str]) -> list[str]:
    """The plan's ``build`` for a package whose tests load build output the checkout lacks:
    ``npm run <script>``, the first of ``BUILD_SCRIPTS`` it has ([] when it needs none; a note
    says what was found either way)."""
    missing = missing_build_output(src, protect.is_test_file)
    if not missing:
        return []
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    name = next((n for n in BUILD_SCRIPTS if isinstance(scripts.get(n), str) and scripts[n].strip()), "")
    if not name:
        notes.append(f"the tests load a module the checkout lacks ({missing}) and package.json has no "
                     f"{', '.join(BUILD_SCRIPTS)} script to build it")
        return []
    notes.append(f"the tests load build output the checkout lacks ({missing}): `npm run {name}` before every run")
    return ["npm", "run", "--silent", name]


def build_line(build: list[str], show: bool = False) -> str:
    """Shell: the plan's build, its output in ``BUILD_LOG``; a failed one says so with its last
    lines (on stderr, ``show``: stdout) and the tests run anyway, failing where they need what
    it did not build."""
    to = "" if show else " >&2"
    return (f"{shlex.join(build)} > {BUILD_LOG} 2>&1 || {{ echo \"build failed (exit $?)\"{to}; "
            f"tail -n 20 {BUILD_LOG}{to}; }}")


def check_lines(fmt: str, report: str, tests: list[str]) -> list[str]:
    """Bash lines: node reads the report (format ``fmt``) and exits 0 only when every test
    of ``tests`` is reported as passed (``harness/checks/js_report.js``, the twin of the parsers)."""
    return [*ids_file(tests), f"node - {shlex.quote(fmt)} {shlex.quote(report)} {IDS_FILE} "
            "<<'DATAGEN_CHECK_EOF'", check_text("js_report").strip(), "DATAGEN_CHECK_EOF"]




@register
class NodeTestProfile(JsProfile):
    """``node --test`` (node's built-in runner), JUnit report; ids are suite paths."""

    name = "node"
    tools = {"node": "nodejs"}
    report = ".datagen-report.xml"
    covers_lines = True

    def looks_for(self) -> str:
        return "a package.json whose test script runs node --test"

    def suite_argv(self) -> list[str]:
        return ["node", "--test"]

    def runner_argv(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        # ids name no file: the whole suite runs (node's own discovery), results are read per id;
        # the spec reporter on stdout keeps what a test file printed (a module it could not
        # load), which the JUnit report reduces to "test failed"
        return ["node", "--test", "--test-reporter=junit", f"--test-reporter-destination={self.report}",
                "--test-reporter=spec", "--test-reporter-destination=stdout"]

    def read_report(self, workdir: Path, run) -> str | None:
        return Profile.read_report(self, workdir, run)

    def parse(self, text: str) -> TestResults:
        from datagen.sandbox.harness.parsers import parse_node_junit

        return parse_node_junit(text)



def _split(test_id: str) -> tuple[str, list[str]]:
    """'test/a.test.js > group > title' -> ('test/a.test.js', ['group', 'title'])."""
    parts = test_id.split(" > ")
    return parts[0], parts[1:]


def _alternation(titles: list[str]) -> str:
    return "^(" + "|".join(re.escape(t) for t in sorted(set(titles))) + ")$"


@register
class JestProfile(JsProfile):
    """jest, ``--json`` report; a subset by file and ``-t`` on the full test names."""

    name = "jest"
    tool = "jest"

    def runner_argv(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        cmd = ["node_modules/.bin/jest", "--ci", "--watchman=false", "--json", f"--outputFile={self.report}"]
        if tests:
            files = sorted({_split(t)[0] for t in tests})
            names = [" ".join(_split(t)[1]) for t in tests if _split(t)[1]]
            # too long for one command line: the whole files, then the whole suite (read per id)
            narrow = ["--runTestsByPath", *files] + (["-t", _alternation(names)] if names else [])
            cmd += fitting(narrow, ["--runTestsByPath", *files], [])
        return cmd

    def parse(self, text: str) -> TestResults:
        from datagen.sandbox.harness.parsers import parse_jest_json

        return parse_jest_json(text)

    def test_files(self, tests: list[str]) -> list[str]:
        return sorted({_split(t)[0] for t in tests if " > " in t})


@register
class VitestProfile(JestProfile):
    """vitest, ``--reporter=json`` (jest's shape); a subset by file and ``-t``."""

    name = "vitest"
    tool = "vitest"

    def runner_argv(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        cmd = ["node_modules/.bin/vitest", "run", "--reporter=json", f"--outputFile={self.report}"]
        if tests:
            files = sorted({_split(t)[0] for t in tests})
            names = [" ".join(_split(t)[1]) for t in tests if _split(t)[1]]
            cmd += fitting([*files] + (["-t", _alternation(names)] if names else []), files, [])
        return cmd


@register
class MochaProfile(JestProfile):
    """mocha, ``--reporter json``; a subset by ``--grep`` on the full titles."""

    name = "mocha"
    covers_lines = True  # JestProfile's is False: jest runs tests in vm contexts V8 counts apart
    tool = "mocha"

    def runner_argv(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        """``--reporter-options`` (the spelling every mocha knows; mocha 3 has no
        ``--reporter-option``); a mocha older than the json reporter's ``output`` option (9)
        prints the report on stdout, which then becomes the report file."""
        cmd = ["node_modules/.bin/mocha", "--reporter", "json", "--reporter-options", f"output={self.report}"]
        cmd += mocha_script_args(env.plan.test_command[1:] if env.plan.test_command else [])
        if tests:
            cmd += fitting(["--grep", _alternation([" ".join(_split(t)[1]) for t in tests])], [])
        out = shlex.quote(MOCHA_STDOUT)
        return ["sh", "-c", f"{shlex.join(cmd)} > {out}; rc=$?; [ -s {shlex.quote(self.report)} ] || "
                f"sed -n '/^{{$/,$p' {out} > {shlex.quote(self.report)}; exit $rc"]  # from the report's own first line

    def plan(self, src: Path) -> EnvPlan:
        plan = super().plan(src)
        script = ((package_json(src).get("scripts") or {}).get("test") or "")
        return plan.model_copy(update={"test_command": ["node_modules/.bin/mocha", *_runner_args(script, "mocha")]})

    def parse(self, text: str) -> TestResults:
        from datagen.sandbox.harness.parsers import parse_mocha_json

        return parse_mocha_json(text)


@register
class AvaProfile(JsProfile):
    """ava, ``--tap`` (stdout into the report); a subset by ``--match`` on the titles."""

    name = "ava"
    covers_lines = True
    tool = "ava"
    report = ".datagen-report.tap"

    def runner_argv(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        match = [arg for t in sorted(set(tests or [])) for arg in ("--match", t.split(" › ", 1)[-1])]
        run = ["node_modules/.bin/ava", "--tap", *fitting(match, [])]
        return ["sh", "-c", f"{shlex.join(run)} > {self.report}"]

    def log_text(self, report: str) -> str:
        return report

    def parse(self, text: str) -> TestResults:
        from datagen.sandbox.harness.parsers import parse_tap

        return parse_tap(text)

    def test_files(self, tests: list[str]) -> list[str]:
        return []


def _runner_args(script: str, tool: str) -> list[str]:
    """The arguments ``scripts.test`` gives ``tool`` (up to the next ``&&``, ``;`` or ``|``)."""
    m = re.search(rf"(?<![\w-]){tool}(?![\w-])([^&|;]*)", script)
    try:
        return shlex.split(m.group(1)) if m else []
    except ValueError:
        return []


_MOCHA_OWN = ("--reporter", "-R", "--reporter-option", "--reporter-options", "-O", "--watch", "-w", "--bail", "-b")
_MOCHA_FLAGS = ("--watch", "-w", "--bail", "-b")  # of those, the ones without a value


def mocha_script_args(args: list[str]) -> list[str]:
    """The script's mocha arguments without the reporter and watch flags datagen sets itself,
    and without ``--bail``: a run that stops at the first failure reports no other test, so
    the tests that still pass beside a bug could not be told from the ones it broke."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in _MOCHA_OWN:
            skip = a not in _MOCHA_FLAGS
            continue
        if a.split("=", 1)[0] in _MOCHA_OWN:
            continue
        out.append(a)
    return out
