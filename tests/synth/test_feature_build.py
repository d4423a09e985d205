"""Feature tasks built for real from each bundled sample repository, one language each.

``datagen build tasks`` with only the ``feature`` family (the samples are small: the size
limits are lowered with ``--set``): a feature task whose stubs compile (PASS_TO_PASS tests
still pass with them), whose group's tests fail, and which replays from its own scripts: a
fresh clone of its sealed environment, ``setup_script``, ``eval_script`` fails, ``git apply``
of the fix, ``eval_script`` passes. The toolchains run for real; a language skips where its
toolchain is missing here.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from datagen.sandbox.harness.profiles.registry import detect_profile
from datagen.sandbox.isolation.select import bwrap_works
from datagen.synth.languages import spec
from tests.synth.buildkit import ROOT, read_tasks, run_build, sql

pytestmark = pytest.mark.slow
SAMPLES = ROOT / "sample_data"
# sample -> the language of its stubs
REPOS = {"tinyhttp": "python", "shapes-js": "javascript", "intervals-ts": "typescript", "kvstore-go": "go",
         "ringbuf-rs": "rust", "fraction-java": "java", "statsc": "c", "geom-cpp": "cpp",
         "ledger-rb": "ruby", "tally-php": "php"}
# wordfreq-c's make suite is one test (nothing can fail while another passes): C is this
# small library with two test programs instead (tests/synth/data/statsc)
STATSC = Path(__file__).parent / "data" / "statsc"
SETS = ("synth.families=[feature]", "synth.feature_lines=[4,400]", "synth.feature_entities=[1,40]",
        "synth.feature_share=0.5", "synth.max_candidates_per_repo=6", "baseline.runs=1", "validation.full_runs=1",
        "crawl.licenses=any", "validation.test_timeout_s=300",
        # the env installs its own test tools: the replay's pins then name versions the index has
        "env.inherit_site_packages=[]")


def _bash(script: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=600)


# Half the languages here, the compiled ones in test_feature_build_compiled.py and
# test_feature_build_jvm_rust.py: the suite's workers take a file each, and ten builds in one
# file would keep one worker busy for the whole run.
SCRIPTED = ("tinyhttp", "shapes-js", "intervals-ts", "ledger-rb", "tally-php")
COMPILED = ("geom-cpp", "kvstore-go", "statsc")
JVM_RUST = ("fraction-java", "ringbuf-rs")


def test_every_sample_repo_is_built_in_one_file():
    assert sorted((*SCRIPTED, *COMPILED, *JVM_RUST)) == sorted(REPOS)


@pytest.mark.parametrize("repo", SCRIPTED)
def test_feature_task_of_a_sample_repo(repo: str, tmp_path: Path, synth_cache: Path) -> None:
    check_feature_task(repo, tmp_path, synth_cache)


def check_feature_task(repo: str, tmp_path: Path, synth_cache: Path) -> None:
    src = STATSC if repo == "statsc" else SAMPLES / repo
    profile = detect_profile(src, [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()])
    if profile is None or (missing := profile.missing_tool()) is not None:
        pytest.skip(missing.reason if profile else "no profile")
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {why}")
    out = tmp_path / "out"
    proc = run_build([src], out, synth_cache, *SETS, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tasks = [t for t in read_tasks(out) if t["strategy"] == "feature_v1"]
    reasons = sql(out, "SELECT reason, count(*) FROM candidates GROUP BY reason ORDER BY 1")
    assert tasks, (reasons, sql(out, "SELECT reason, detail FROM repo_baselines"))
    rows = dict(sql(out, "SELECT instance_id, family FROM tasks"))
    stub = spec(REPOS[repo]).stub.statement
    task = tasks[0]
    assert rows[task["instance_id"]] == "feature"
    assert task["FAIL_TO_PASS"] and task["PASS_TO_PASS"]  # the stubs compile: other tests still pass
    added = [line[1:] for line in task["bug_patch"].splitlines() if line.startswith("+") and not line.startswith("++")]
    assert any(stub in line for line in added)
    [(entities, lines, files)] = sql(out, "SELECT entities, changed_lines, changed_files FROM tasks "
                                          f"WHERE instance_id = '{task['instance_id']}'")
    assert entities >= 1 and lines == task["changed_lines"] and files == task["changed_files"]
    assert "must pass" in task["problem_statement"]
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(out / task["repo_path"]), str(clone)], check=True)
    subprocess.run(["git", "checkout", "-q", task["base_commit"]], cwd=clone, check=True)
    setup = _bash(task["setup_script"], clone)
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-2000:]
    before = _bash(task["eval_script"], clone)
    assert before.returncode != 0, before.stdout[-2000:]
    subprocess.run(["git", "apply", "-"], cwd=clone, input=task["patch"], text=True, check=True)
    after = _bash(task["eval_script"], clone)
    assert after.returncode == 0, after.stdout[-3000:] + after.stderr[-2000:]
