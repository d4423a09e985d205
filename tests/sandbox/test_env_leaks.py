"""No environment holds the repo's own code (issue 37): real envs built in the sandbox, the
guard that fails an env holding a copy, the hack patch that reads the clean module from the
env graded as failing by ``datagen validate`` and the difficulty scorer, and what a task's
run can see of the host."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from datagen.builds.tasks.output import outcome_of
from datagen.config.sandbox import EnvConfig, SandboxConfig, SandboxLimits, ValidateRecipe, ValidationConfig
from datagen.config.score import DifficultyConfig
from datagen.errors import SkipItem
from datagen.records.env import EnvPlan, InstallStep
from datagen.records.tasks import RepoBaselineRow, TaskRecord
from datagen.sandbox.envs.cache import EnvSetupError
from datagen.sandbox.envs.leaks import (
    LEAK_REASON,
    Leak,
    added_blocks,
    env_leaks,
    held_copies,
    held_files,
    revealed,
    source_digests,
)
from datagen.sandbox.envs.python.manager import EnvManager
from datagen.sandbox.harness.env_check import check_task_envs
from datagen.sandbox.harness.profiles._env import cached_env
from datagen.sandbox.harness.profiles.base import EnvContext, Profile
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.harness.task_store import materialize, read_tasks
from datagen.sandbox.harness.validate import Validator
from datagen.score.difficulty import DifficultyScorer
from datagen.synth.baseline import Baseline
from datagen.synth.candidates import Candidate
from datagen.synth.check import Verdict
from datagen.synth.emit import commit_task
from datagen.synth.gitrepo import TaskRepo
from datagen.teachers.types import TeacherResult
from tests.sandbox import leakkit
from tests.sitekit import SITE

LIMITS = dict(timeout_s=300, memory_mb=2048, processes=256)


def env_config(tmp_path: Path) -> EnvConfig:
    return EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE])


# -- the guard on plain folders -------------------------------------------------------------
def test_a_copy_of_a_code_file_is_a_leak_small_files_and_licenses_are_not(tmp_path):
    src, env = tmp_path / "src", tmp_path / "env"
    leakkit.write_project(src)
    (src / "LICENSE").write_text("MIT License\n\n" + "Permission is hereby granted, free of charge. " * 5)
    (src / "src" / "durkit" / "tiny.py").write_text("X = 1\n")
    (env / "lib" / "durkit").mkdir(parents=True)
    (env / "LICENSE").write_text((src / "LICENSE").read_text())  # a dependency's identical license
    (env / "lib" / "durkit" / "tiny.py").write_text("X = 1\n")  # equal by chance: too small to tell
    (env / "lib" / "durkit" / "other.py").write_text(leakkit.DUR + "# edited\n")
    assert env_leaks(env, src) == []
    (env / "lib" / "durkit" / "dur.py").write_text(leakkit.DUR)
    (env / "link.py").symlink_to(src / "src" / "durkit" / "dur.py")  # a link is not read through
    leaks = env_leaks(env, src)
    assert [(x.env_file, x.source) for x in leaks] == [("lib/durkit/dur.py", "src/durkit/dur.py")]
    assert "src/durkit/dur.py" in {p for by in source_digests(src).values() for p in by.values()}


def test_revealed_finds_fixed_files_and_added_blocks(tmp_path):
    env = tmp_path / "env"
    (env / "a").mkdir(parents=True)
    (env / "a" / "same.py").write_text(leakkit.DUR)
    reindented = "\n".join("        " + x for x in leakkit.BODY.splitlines())  # indentation does not hide it
    (env / "a" / "generated.c").write_text("/* " + reindented + " */\n")
    (env / "a" / "binary.so").write_bytes(b"\0ELF" + leakkit.BODY.encode())
    (env / "a" / "unrelated.py").write_text("def f():\n    return 1\n")
    blocks = added_blocks("--- a/x\n+++ b/x\n@@\n-    raise NotImplementedError\n"
                          + "".join("+" + x + "\n" for x in leakkit.BODY.splitlines()[1:]) + " \n")
    assert len(blocks) == 1 and "_PART.findall(text)" in blocks[0]
    hits = {h.env_file: h.what for h in revealed(env, {"src/durkit/dur.py": leakkit.DUR.encode()}, blocks)}
    assert hits == {"a/same.py": "equals src/durkit/dur.py", "a/generated.c": "holds an added block of the fix"}
    assert added_blocks("+++ b/x\n+    return x\n") == []  # too short to tell


class _CopyingProfile(Profile):
    """A profile whose env build copies the repo's code into the env (what the guard is for)."""

    name = "copying-test"

    def plan(self, src: Path) -> EnvPlan:
        return EnvPlan(profile=self.name)


def test_cached_env_fails_an_env_holding_the_repos_code(bwrap, tmp_path):
    src = leakkit.write_project(tmp_path / "repo")
    ctx = EnvContext(bwrap, SandboxLimits(**LIMITS, network=True), env_config(tmp_path), tmp_path / "envs")
    profile = _CopyingProfile()

    def build(target: Path, step) -> None:
        step("copy", ["cp", "-r", str(src / "src"), "vendored"], target, ro_paths=(src,))

    with pytest.raises(EnvSetupError) as err:
        cached_env(profile, src, profile.plan(src), ctx, build)
    assert err.value.reason == LEAK_REASON and "vendored/durkit/dur.py = src/durkit/dur.py" in str(err.value)
    (target,) = [p for p in (tmp_path / "envs").iterdir() if p.is_dir()]
    # nothing of the copy stays readable: the build's record only
    assert sorted(p.name for p in target.iterdir()) == ["attempt.json", "failed.json"]
    assert json.loads((target / "failed.json").read_text())["reason"] == LEAK_REASON
    with pytest.raises(EnvSetupError) as again:  # recorded, not retried
        cached_env(profile, src, profile.plan(src), ctx, build)
    assert again.value.reason == LEAK_REASON


def test_a_dependency_vendoring_a_few_files_is_kept_and_those_files_are_held(bwrap, tmp_path):
    """setuptools ships byte-identical copies of zipp's ``compat/`` files: the env is kept,
    the copied files are held (never a task's target), and a candidate changing one is
    dropped as ``fix_in_environment`` when it is emitted."""
    src = leakkit.write_project(tmp_path / "repo")
    ctx = EnvContext(bwrap, SandboxLimits(**LIMITS, network=True), env_config(tmp_path), tmp_path / "envs")
    profile = _CopyingProfile()

    def build(target: Path, step) -> None:
        step("vendor", ["sh", "-c", f"mkdir -p dep/_vendor && cp {src}/src/durkit/dur.py dep/_vendor/"], target,
             ro_paths=(src,))

    target = cached_env(profile, src, profile.plan(src), ctx, build)
    assert held_files(target) == ["src/durkit/dur.py"] and (target / "dep" / "_vendor" / "dur.py").is_file()
    assert held_copies(env_leaks(target, src), source_digests(src)) == ["src/durkit/dur.py"]
    # the project's own code files, most of them copied: no longer a few vendored files
    digests = source_digests(src)
    assert held_copies([Leak("a", "src/durkit/dur.py"), Leak("b", "src/durkit/__init__.py")], digests) is None

    store = TaskRepo(tmp_path / "work" / "repo.git")
    clean = store.commit_folder(src, "clean source")
    dur = (src / "src" / "durkit" / "dur.py").read_text()
    c = Candidate("repo", "py_op_change_v1", "procedural", "src/durkit/dur.py::parse", 0,
                  {"src/durkit/dur.py": dur.replace("findall", "search", 1)})
    verdict = Verdict(True, None, "", ["tests/test_parse.py::test_parse"], ["tests/test_render.py::test_render"])
    base = Baseline("pytest", stable=verdict.fail_to_pass + verdict.pass_to_pass, held=held_files(target))
    with pytest.raises(SkipItem) as err:
        commit_task(store, clean, c, verdict, "pytest", base)
    assert err.value.reason == "fix_in_environment" and "src/durkit/dur.py" in str(err.value)
    assert commit_task(store, clean, c, verdict, "pytest", Baseline("pytest")).record.patch


# -- real Python envs -----------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("install", ["plain", "editable"])
def test_python_env_holds_the_projects_metadata_but_none_of_its_code(bwrap, tmp_path, install):
    src = leakkit.write_project(tmp_path / "durkit")
    cfg = env_config(tmp_path)
    manager = EnvManager(cfg, bwrap, SandboxLimits(**LIMITS))
    plan = manager.plan(src).model_copy(update={"project_install": install})
    assert any(s.kind == "project" for s in plan.install)
    env = manager.ensure(src, plan=plan)
    venv = Path(env.path) / "venv"
    assert leakkit.installed_copy(venv) == [] and env_leaks(Path(env.path), src) == []
    assert not list(venv.glob("lib/*/site-packages/durkit")), "the package folder is gone, bytecode too"
    assert not list(venv.glob("lib/*/site-packages/*.pth")) or all(
        "durkit" not in p.read_text() for p in venv.glob("lib/*/site-packages/*.pth")), "no path to a copy"
    assert list(venv.glob("lib/*/site-packages/durkit-1.2.0.dist-info/METADATA"))
    assert not list((tmp_path / "envs" / ".uv-cache").rglob("durkit*")), "no built wheel in the shared cache"
    attempt = manager.attempt_of(src, plan)
    assert any("taken out of the env" in n for n in attempt["plan"]["notes"]), attempt["plan"]["notes"]
    # a run imports the working copy's code and still finds the project's version
    work = tmp_path / "work"
    leakkit.write_project(work)
    (work / "src" / "durkit" / "dur.py").write_text(leakkit.DUR + "MARK = 'working copy'\n")
    code = "import durkit, durkit.dur; print(durkit.__version__, durkit.dur.MARK, durkit.__file__)"
    run = bwrap.run([env.python, "-c", code], work, SandboxLimits(**LIMITS), env=env.run_env(work),
                    ro_paths=env.ro_paths)
    assert run.exit_code == 0, run.stderr
    assert run.stdout.split()[:3] == ["1.2.0", "working", "copy"] and str(work) in run.stdout


@pytest.mark.slow
def test_a_lib_layout_imports_from_the_working_copy(bwrap, tmp_path):
    """``package-dir = {"" = "lib"}``: the install is taken out, and ``lib/`` is put on the path."""
    src = leakkit.write_project(tmp_path / "durkit")
    (src / "src").rename(src / "lib")
    (src / "pyproject.toml").write_text(leakkit.PYPROJECT.replace('where = ["src"]', 'where = ["lib"]'))
    manager = EnvManager(env_config(tmp_path), bwrap, SandboxLimits(**LIMITS))
    env = manager.ensure(src)
    assert env.import_roots == ("lib",) and leakkit.installed_copy(Path(env.path)) == []
    run = bwrap.run([env.python, "-c", "import durkit.dur as d; print(d.__file__)"], src, SandboxLimits(**LIMITS),
                    env=env.run_env(src), ro_paths=env.ro_paths)
    assert run.exit_code == 0 and run.stdout.strip() == str(src / "lib" / "durkit" / "dur.py"), run.stderr


@pytest.mark.slow
def test_a_plan_that_copies_the_code_into_the_env_fails_with_the_reason_recorded(bwrap, tmp_path):
    src = leakkit.write_project(tmp_path / "durkit")
    cfg = env_config(tmp_path)
    plan = EnvPlan(profile="pytest", install=[InstallStep(
        name="copy", kind="command", args=["cp", "-r", "src/src/durkit", "venv/durkit-copy"], source="user")],
        test_command=["python", "-m", "pytest"])
    record = tmp_path / "work" / "envs" / "durkit.json"
    with pytest.raises(EnvSetupError) as err:
        ensure_env(get_profile("pytest"), src, cfg, bwrap, SandboxLimits(**LIMITS), plan=plan, record=record)
    assert err.value.reason == LEAK_REASON
    rec = json.loads(record.read_text())
    assert rec["outcome"] == "failed" and rec["failed_step"] == "leak check"
    assert "venv/durkit-copy/dur.py = src/durkit/dur.py" in rec["error"]
    assert not (Path(cfg.cache_dir) / rec["env_key"] / "venv").exists()
    row = RepoBaselineRow(run_id="r", repo="durkit", runner="pytest", status="skipped", reason=err.value.reason)
    assert outcome_of(row, 0) == "env_failed"


# -- the hack patch, graded ---------------------------------------------------------------
@pytest.fixture
def hack_task(bwrap, tmp_path) -> tuple[TaskRecord, str, Path]:
    """The task, its hack patch and its base folder; the env cache holds the env built from
    the clean tree (as a build's baseline leaves it), which every run below reuses."""
    fields = leakkit.make_task(tmp_path)
    path = leakkit.write_tasks(tmp_path, fields)
    (task, base), = read_tasks(path)
    env = leakkit.build_clean_env(tmp_path, env_config(tmp_path), bwrap, SandboxLimits(**LIMITS))
    assert leakkit.installed_copy(Path(env.path)) == []
    return task, fields["hack"], base


@pytest.mark.slow
def test_validate_and_difficulty_grade_the_hack_as_failing(bwrap, tmp_path, hack_task):
    task, hack, base = hack_task
    recipe = ValidateRecipe(sandbox=SandboxConfig(backend="bwrap", limits=dict(LIMITS)), env=env_config(tmp_path),
                            validation=ValidationConfig(reruns=1, workers=1, test_timeout_s=120))
    gold = Validator(recipe, bwrap).validate(task, base)
    assert gold.status == "valid", gold
    hacked = Validator(recipe, bwrap).validate(task.model_copy(update={"patch": hack}), base)
    assert (hacked.status, hacked.reason) == ("invalid", "f2p_mismatch"), hacked
    assert sorted(hacked.missing_f2p) == sorted(task.FAIL_TO_PASS)

    scorer = DifficultyScorer(DifficultyConfig(enabled=True, k=2, workers=1, test_timeout_s=120), None, bwrap,
                              limits=recipe.sandbox.limits, env=env_config(tmp_path))
    answers = [TeacherResult(key=f"a{i}", status="ok", texts=[f"```diff\n{p}```"])
               for i, p in enumerate((task.patch, hack))]
    (graded,) = scorer.grade_tasks([(task, base, answers)], workers=1).values()
    assert [a.passed for a in graded.attempts] == [True, False], graded
    assert graded.attempts[1].reason == "tests_failed"

    # the env check finds nothing of the fix in the env the runs used
    (row,) = check_task_envs([(task, base)], env_config(tmp_path), bwrap, recipe.sandbox.limits, tmp_path)
    assert row.fixed_files == ["src/durkit/dur.py"] and not row.skipped
    assert (row.equal, row.blocks) == ([], []), row


# -- what a task's run can see --------------------------------------------------------------
@pytest.mark.slow
def test_a_tasks_run_sees_its_env_but_not_other_envs_the_work_folder_or_the_task_store(bwrap, tmp_path, hack_task):
    task, _, base = hack_task
    cfg = env_config(tmp_path)
    other = leakkit.write_project(tmp_path / "other")
    (other / "src" / "durkit" / "dur.py").write_text(leakkit.DUR + "# other repo\n")
    (other / "pyproject.toml").write_text(leakkit.PYPROJECT.replace("1.2.0", "1.3.0"))  # another env key
    limits = SandboxLimits(**LIMITS)
    other_env = ensure_env(get_profile("pytest"), other, cfg, bwrap, limits)
    work_folder = tmp_path / "build-work"  # a build's work folder: clean snapshots and the task store
    (work_folder / "src" / "durkit").mkdir(parents=True)
    (work_folder / "src" / "durkit" / "dur.py").write_text(leakkit.DUR)
    subprocess.run(["git", "init", "-q", str(work_folder / ".work" / "git")], check=True)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    materialize(task, base, checkout)
    env = ensure_env(get_profile("pytest"), checkout, cfg, bwrap, limits)
    assert env.path != other_env.path
    workdir = tmp_path / "wc"
    workdir.mkdir()
    probe = ("import os, sys\n"
             "for p in sys.argv[1:]:\n"
             "    print(p, os.path.exists(p))\n")
    paths = [str(env.path), str(other_env.path), str(Path(cfg.cache_dir) / ".uv-cache"), str(work_folder),
             str(work_folder / ".work" / "git"), str(base / "durkit" / ".git"), str(other)]
    run = bwrap.run([env.extra.python if env.extra else "python3", "-c", probe, *paths], workdir, limits,
                    env={**env.env}, ro_paths=env.ro_paths)
    assert run.exit_code == 0, run.stderr
    seen = dict(line.rsplit(" ", 1) for line in run.stdout.splitlines())
    assert seen == {paths[0]: "True", **{p: "False" for p in paths[1:]}}, seen
