"""Rust crates: ``cargo test --no-fail-fast --tests`` (every target with tests: the library,
binaries, integration tests; not doctests, whose ids carry line numbers that a change moves),
stable libtest output parsed. A subset is libtest's ``--exact`` name filters.

Setup (network on) runs ``cargo fetch`` with ``CARGO_HOME`` in the env folder; runs are
``--offline`` and use the toolchain's own binaries (its sysroot's ``bin``, no rustup proxy),
the one ``rust-toolchain.toml`` asks for when it is installed here. Test ids are
``<target source file>::<test path>``, e.g. ``src/lib.rs::buffer::tests::wraps``.

Where ``cargo fetch`` fails (crates.io unreachable) and every registry dependency is one the
test build never compiles (optional and off by default, a dev-dependency only the benches name),
those are stand-in crates and the env goes on (``_cargo_stubs``; ``fallback`` "stubs").
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.harness.checks import check_text
from datagen.sandbox.harness.profiles._cargo_stubs import STUBS, stand_ins, stub_lines, write_stubs
from datagen.sandbox.harness.profiles._env import cached_env, copy_source
from datagen.sandbox.harness.profiles.base import Profile, ProfileEnv, TestResults, ToolchainMissing, fitting
from datagen.sandbox.harness.profiles.registry import register
from datagen.sandbox.isolation.base import DEFAULT_PATH

if TYPE_CHECKING:
    from datagen.sandbox.harness.profiles.base import EnvContext

TEST_ARGS = ["test", "--no-fail-fast", "--tests"]
STUB_DIR, STUB_FILE = "cargo-stubs", "stubs.json"  # the env's stand-in crates and their record
STUB_CONFIG = '"$ST/config.toml"'  # replay: the --config file of the stand-ins (``stub_lines``)


def toolchain_request(src: Path) -> str:
    """The channel ``rust-toolchain.toml`` (or the older ``rust-toolchain``) names ('' if none)."""
    path = src / "rust-toolchain.toml"
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            return ""
        return str((data.get("toolchain") or {}).get("channel", ""))
    old = src / "rust-toolchain"
    if old.is_file():
        text = old.read_text(encoding="utf-8", errors="replace").strip()
        return text if "\n" not in text and "[" not in text else ""
    return ""


def sysroot(channel: str = "") -> Path | None:
    """The sysroot of the local rustc (``channel`` through rustup when it is given)."""
    rustc = shutil.which("rustc")
    if rustc is None:
        return None
    cmd = [rustc, f"+{channel}", "--print", "sysroot"] if channel else [rustc, "--print", "sysroot"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    path = Path(out.stdout.strip())
    return path if out.returncode == 0 and (path / "bin" / "cargo").exists() else None


def rustc_version(root: Path) -> str:
    out = subprocess.run([str(root / "bin" / "rustc"), "--version"], capture_output=True, text=True)
    m = re.search(r"rustc (\S+)", out.stdout)
    return m.group(1) if m else ""


@register
class CargoProfile(Profile):
    """A Cargo package or workspace at the repo's root with Rust tests."""

    name = "cargo"
    language = "rust"
    source_langs = ("rust",)
    tools = {"cargo": "cargo", "rustc": "rustc"}
    priority = 50
    report = ".datagen-report.txt"
    image, image_default = "rust:{version}", "rust:1"

    def detect(self, src: Path, paths: list[str]) -> bool:
        return (src / "Cargo.toml").is_file() and any(p.endswith(".rs") for p in paths)

    def is_test_file(self, path: str) -> bool:
        return path.startswith("tests/") or "/tests/" in path

    def dependency_files(self, src: Path) -> list[str]:
        names = ["Cargo.toml", "Cargo.lock", "rust-toolchain.toml", "rust-toolchain"]
        return [n for n in names if (src / n).is_file()]

    def plan(self, src: Path) -> EnvPlan:
        request = toolchain_request(src)
        root, mismatch, notes = sysroot(request) if request else None, None, []
        if request and root is None:
            mismatch = f"rust-toolchain asks {request!r}; not installed here (no network for rustup)"
        root = root or sysroot()
        version = rustc_version(root) if root else ""
        if root is not None:
            notes.append(f"sysroot {root}")
        install = [InstallStep(name="cargo fetch", kind="command", args=["cargo", "fetch"], origin="Cargo.toml")]
        return EnvPlan(profile=self.name, toolchain=f"rust{version}" if version else "rust",
                       toolchain_request=request, toolchain_mismatch=mismatch, install=install,
                       env={"CARGO_INCREMENTAL": "0", "CARGO_TERM_COLOR": "never"},
                       test_command=["cargo", *TEST_ARGS], notes=notes)

    def _sysroot(self, plan: EnvPlan) -> Path:
        for note in plan.notes:
            if note.startswith("sysroot "):
                return Path(note.removeprefix("sysroot "))
        root = sysroot()
        if root is None:
            raise ToolchainMissing("cargo", self.tools["cargo"])
        return root

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        root = self._sysroot(plan)
        base = {**plan.env, "PATH": f"{root / 'bin'}:{DEFAULT_PATH}"}

        def build(target: Path, step) -> None:
            work = copy_source(src, target / "work", skip=(".git", "target"))
            env = {**base, "CARGO_HOME": str(target / "cargo-home")}
            if ctx.config.mirrors.cargo:  # the recipe's crates.io replacement, kept for the offline runs
                from datagen.sandbox.envs.mirrors import cargo_config

                (target / "cargo-home").mkdir(exist_ok=True)
                (target / "cargo-home" / "config.toml").write_text(cargo_config(ctx.config.mirrors.cargo))
            (target / "cargo-home").mkdir(exist_ok=True)
            for s in plan.install:
                if step(s.name, list(s.args), work, env=env, ro_paths=(root,), check=False):
                    continue
                stubs, needed = stand_ins(src)
                if needed or not stubs:  # the tests compile a crate it could not fetch: fail as it did
                    step(s.name, list(s.args), work, env=env, ro_paths=(root,))
                    continue  # (a retry that fetched after all: the real crates, no stand-ins)
                config = target / "cargo-home" / "config.toml"
                before = config.read_text(encoding="utf-8") if config.is_file() else ""
                config.write_text(before + write_stubs(stubs, target / STUB_DIR), encoding="utf-8")
                step(f"{s.name} (stand-ins for {len(stubs)} crates)", list(s.args), work,
                     env={**env, "CARGO_NET_OFFLINE": "true"}, ro_paths=(root,))
                (target / STUB_FILE).write_text(json.dumps({"pins": [x.pin() for x in stubs],
                                                            "why": [f"{x.name}: {x.why}" for x in stubs]}))
            shutil.rmtree(work, ignore_errors=True)

        target = cached_env(self, src, plan, ctx, build)
        env = {**base, "CARGO_HOME": str(target / "cargo-home"), "CARGO_NET_OFFLINE": "true"}
        if (target / STUB_FILE).is_file():
            made = json.loads((target / STUB_FILE).read_text(encoding="utf-8"))
            plan = plan.model_copy(update={
                "fallback": STUBS, "pins": made["pins"],
                "notes": [*plan.notes, "cargo fetch failed: stand-in crates for what the tests never compile ("
                          + "; ".join(made["why"]) + ")"]})
        return ProfileEnv(self.name, plan, path=target, env=env, ro_paths=(target, root))

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        return ["sh", "-c", f"{shlex.join(cargo_test_argv(tests))} > {self.report} 2>&1"]

    def parse(self, text: str) -> TestResults:
        from datagen.sandbox.harness.parsers import parse_cargo_test

        return parse_cargo_test(text)

    def log_text(self, report: str) -> str:
        return report

    def test_files(self, tests: list[str]) -> list[str]:
        return sorted({t.split("::", 1)[0] for t in tests if t.split("::", 1)[0].startswith("tests/")})

    # --- replay -------------------------------------------------------------------------
    def setup_commands(self, plan: EnvPlan) -> list[str]:
        if plan.fallback == STUBS:
            return [*_stub_comment(plan), *stub_lines(plan.pins),
                    *(f"cargo --config {STUB_CONFIG} {shlex.join(s.args[1:])} --offline || exit 1"
                      for s in plan.install if s.kind == "command" and s.args[:1] == ["cargo"])]
        return [f"{shlex.join(s.args)} || exit 1" for s in plan.install if s.kind == "command"]

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        want = "\n".join(f"{t} pass" for t in tests)
        argv = shlex.join(cargo_test_argv(tests))
        if plan.fallback == STUBS:
            argv = argv.replace("cargo ", f"cargo --config {STUB_CONFIG} ", 1)
        return [*(stub_lines(plan.pins) if plan.fallback == STUBS else []),
                f"{argv} > .datagen-eval.log 2>&1", 'echo "cargo test exit $?"',
                "tail -n 30 .datagen-eval.log",
                # the target of each libtest line is the `Running <file>` line before it
                f"awk {shlex.quote(check_text('cargo').rstrip())} .datagen-eval.log > .datagen-eval.got",
                "bad=0", "while IFS= read -r want; do", '  grep -qxF -- "$want" .datagen-eval.got || '
                '{ echo "NOT PASSED: ${want% pass}"; bad=1; }',
                f"done <<'DATAGEN_TESTS_EOF'\n{want}\nDATAGEN_TESTS_EOF",
                "exit $bad"]


def _stub_comment(plan: EnvPlan) -> list[str]:
    return ["# cargo fetch failed where this task was validated (crates.io unreachable) and that env went",
            "# on with empty stand-ins for the crates the tests never compile: optional ones off by",
            "# default, dev-dependencies only the benches name. This script and the eval script do the",
            f"# same: {', '.join(plan.pins)}"]


def cargo_test_argv(tests: list[str] | None) -> list[str]:
    """``cargo test --offline`` of every test target; with ``tests``, libtest's ``--exact``
    filters on their paths (the same name in two targets runs in both)."""
    cmd = ["cargo", *TEST_ARGS, "--offline"]
    if not tests:
        return cmd
    # names too many for one command line: every test target whole (the report is read per id)
    return [*cmd, *fitting(["--", "--exact", *sorted({t.split("::", 1)[1] for t in tests if "::" in t})], [])]
