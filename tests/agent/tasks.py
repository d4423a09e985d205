"""One task per sample repo (one per language), made as ``datagen build tasks`` makes them:
the repo's env built in the real sandbox, its baseline measured, a one-line bug validated
(FAIL_TO_PASS measured), the task committed and sealed. The agent tests share them per module.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.records.tasks import TaskRecord
from datagen.sandbox.harness.profiles.registry import detect_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from datagen.synth.candidates import Candidate
from datagen.synth.check import check_changes
from tests import tools
from tests.conftest import write_tree
from tests.sandbox.test_profiles_replay_more import MAKE_FIXTURE
from tests.sealed import emit_sealed
from tests.sitekit import SITE

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"


@dataclass(frozen=True)
class Case:
    repo: str  # a folder of sample_data/
    bug: tuple[str, str, str]  # path, text, its buggy replacement
    tools: tuple[str, ...] = ()
    edits: tuple[tuple[str, str, str], ...] = ()  # made to the copy first: what no registry here serves


# wordfreq-c has one test binary (make grades per target: nothing would pass beside the bug), so C
# is a small make project of two targets, the one tests/sandbox/test_profiles_replay_more.py uses
C_FILES = MAKE_FIXTURE


CASES = {
    "python": Case("tinyhttp", ("tinyhttp/headers.py", "if n.lower() == key]", "if n == key]")),
    "go": Case("kvstore-go", ("internal/wal/record.go", "Key:   string(buf[headerSize : headerSize+keyLen]),",
                              "Key:   string(buf[headerSize : headerSize+keyLen-1]),"), ("go",)),
    "rust": Case("ringbuf-rs", ("src/buffer.rs", "self.len == self.capacity()", "self.len + 1 == self.capacity()"),
                 ("cargo",)),
    "c": Case("", ("sum.c", "i < n; i++) s += v[i];", "i < n - 1; i++) s += v[i];"), ("make", "cc")),
    "cpp": Case("geom-cpp", ("src/vec.cpp", "return a.x * b.x + a.y * b.y;", "return a.x * b.x - a.y * b.y;"),
                ("cmake", "ctest", "c++")),
    "ts": Case("intervals-ts", ("src/interval.ts", "return i.end - i.start;", "return i.end - i.start - 1;"),
               ("node", "npm")),
    "js": Case("shapes-js", ("src/shapes/rect.js", "return 2 * (this.width + this.height);",
                             "return 2 * this.width + this.height;"), ("node", "npm"),
               edits=(("package.json", '"dependencies": {\n    "leftpad": "^1.0.3"\n  },\n', ""),
                      ("src/util/format.js", "import leftpad from 'leftpad';",
                       "const leftpad = (text, width) => String(text).padStart(width);"))),
    "ruby": Case("ledger-rb", ("lib/ledger/money.rb", "i < extra ? base + 1 : base", "i <= extra ? base + 1 : base"),
                 ("ruby", "rspec")),
    "php": Case("tally-php", ("src/Roman.php", "while ($n >= $value)", "while ($n > $value)"), ("php", "phpunit")),
    "java": Case("fraction-java", ("src/main/java/org/example/fraction/Fraction.java", "q -= 1;", "q += 1;"),
                 ("mvn", "javac")),
}


def env_config(root: Path) -> EnvConfig:
    return EnvConfig(cache_dir=str(root / "envs"), inherit_site_packages=[SITE])


def _source(case: Case, dest: Path) -> Path:
    if not case.repo:
        return write_tree(dest, C_FILES)
    shutil.copytree(SAMPLES / case.repo, dest, ignore=shutil.ignore_patterns("target", "_datagen_build",
                                                                             "node_modules", "vendor"))
    for path, old, new in case.edits:
        text = (dest / path).read_text()
        assert old in text, (path, old)
        (dest / path).write_text(text.replace(old, new))
    return dest


def make_task(root: Path, language: str) -> TaskRecord:
    """The language's task under ``root`` (its ``repo_path`` is relative to ``root / 'out'``);
    skips where bwrap or the language's tools are missing."""
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    case = CASES[language]
    tools.skip_unless(*case.tools)
    src = _source(case, root / "src" / (case.repo or language))
    paths = [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()]
    profile = detect_profile(src, paths)
    assert profile is not None, case.repo
    if missing := profile.missing_tool():
        pytest.skip(f"{profile.name}: {missing}")
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=240)
    env = ensure_env(profile, src, env_config(root), sandbox, limits)
    (root / "scratch").mkdir(exist_ok=True)
    suite = SuiteRunner(profile.name, src, sandbox, limits, env, root / "scratch")
    base = measure_baseline(suite, 1, False)
    if base.reason is not None:
        pytest.skip(f"{case.repo}: no baseline here ({base.reason}: {base.detail[:200]})")
    path, old, new = case.bug
    text = (src / path).read_text()
    assert text.count(old) == 1, (path, old)
    verdict = check_changes(suite, base, {path: text.replace(old, new)}, [], 1)
    assert verdict.kept, (language, verdict.reason)
    c = Candidate(src.name, "hand_made_v1", "procedural", f"{path}::x", 0, {path: text.replace(old, new)})
    return emit_sealed(root, src, c, verdict, profile.name, base)
