"""Go modules: ``go test -json ./...``; a subset is ``-run`` on the top-level test names of
the packages that hold them.

Setup (network on) downloads the module's dependencies (``go mod download``) into the env
folder and warms a build cache there (``go test -run ^$ ./...`` compiles every package and
test binary once); each run copies that cache into its private /tmp, so the tests run
offline (``GOPROXY=off``) without compiling the standard library and dependencies again.
Test ids are ``<package import path>::<TestName>[/<subtest>]``.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.base import DEFAULT_PATH
from datagen.sandbox.profiles.base import EnvContext, Profile, ProfileEnv, TestResults, cached_env, copy_source
from datagen.sandbox.profiles.registry import register

_GO_LINE = re.compile(r"^go\s+(\d+(?:\.\d+){0,2})\s*$", re.M)
_TOOLCHAIN_LINE = re.compile(r"^toolchain\s+(go\S+)\s*$", re.M)
_REQUIRE = re.compile(r"^require\b", re.M)
RUN_CACHE = "/tmp/datagen-gocache"


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

    def detect(self, src: Path, paths: list[str]) -> bool:
        return (src / "go.mod").is_file() and any(p.endswith("_test.go") for p in paths)

    def is_test_file(self, path: str) -> bool:
        return path.endswith("_test.go") or "/testdata/" in f"/{path}"

    def dependency_files(self, src: Path) -> list[str]:
        return [n for n in ("go.mod", "go.sum", "go.work", "go.work.sum") if (src / n).is_file()]

    def plan(self, src: Path) -> EnvPlan:
        text = (src / "go.mod").read_text(encoding="utf-8", errors="replace")
        want, toolchain = go_request(text)
        have = go_version()
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

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        def build(target: Path, step) -> None:
            work = copy_source(src, target / "work")
            env = {**plan.env, **self._paths(target), "GOCACHE": str(target / "gocache"),
                   "GOFLAGS": "-modcacherw " + plan.env.get("GOFLAGS", "")}
            for s in plan.install:
                step(s.name, list(s.args), work, env=env)
            # compile every package and test binary once; failures here show again in the runs
            step("warm build cache", ["go", "test", "-count=1", "-run", "^$", "./..."], work, env=env, check=False)
            shutil.rmtree(work, ignore_errors=True)

        target = cached_env(self, src, plan, ctx, build)
        env = {**plan.env, **self._paths(target), "GOPROXY": "off", "GOCACHE": RUN_CACHE}
        return ProfileEnv(self.name, plan, path=target, env=env, ro_paths=(target,))

    @staticmethod
    def _paths(target: Path) -> dict[str, str]:
        return {"GOPATH": str(target / "gopath"), "GOMODCACHE": str(target / "gopath" / "pkg" / "mod"),
                "PATH": DEFAULT_PATH}

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        warm = f"cp -r {shlex.quote(str(env.path / 'gocache'))} {RUN_CACHE} 2>/dev/null; " if env.path else ""
        return ["sh", "-c", f"{warm}{shlex.join(go_test_argv(tests))} > {self.report}"]

    def parse(self, text: str) -> TestResults:
        from datagen.sandbox.parsers import parse_go_json

        return parse_go_json(text)

    def log_text(self, report: str) -> str:
        from datagen.sandbox.parsers import go_output

        return go_output(report)

    def test_files(self, tests: list[str]) -> list[str]:
        return []

    # --- replay -------------------------------------------------------------------------
    def setup_commands(self, plan: EnvPlan) -> list[str]:
        lines = [f"{shlex.join(s.args)} || exit 1" for s in plan.install if s.kind == "command"]
        return [*lines, "go test -count=1 -run '^$' ./... >/dev/null 2>&1 || true  # compiles once"]

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        lines = ["export GOPROXY=off", f"{shlex.join(go_test_argv(tests))} > .datagen-eval.jsonl 2>&1",
                 'echo "go test exit $?"', "bad=0"]
        for t in tests:
            package, name = t.split("::", 1)
            event = f'"Action":"pass","Package":"{package}","Test":"{name}"'
            lines.append(f"grep -qF {shlex.quote(event)} .datagen-eval.jsonl || "
                         f"{{ echo {shlex.quote('NOT PASSED: ' + t)}; bad=1; }}")
        return [*lines, "exit $bad"]


def go_test_argv(tests: list[str] | None) -> list[str]:
    """``go test -json`` over ``./...``, or over the packages of ``tests`` with ``-run`` on
    their top-level names (subtests run with their parent)."""
    cmd = ["go", "test", "-json", "-count=1"]
    if not tests:
        return [*cmd, "./..."]
    packages = sorted({t.split("::", 1)[0] for t in tests})
    names = sorted({t.split("::", 1)[1].split("/", 1)[0] for t in tests})
    return [*cmd, "-run", "^(" + "|".join(re.escape(n) for n in names) + ")$", *packages]
