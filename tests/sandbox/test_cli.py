"""`datagen sandbox run|check` and `datagen validate` through the CLI."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from datagen.cli.app import app
from tests.sitekit import SITE

runner = CliRunner()


def test_run_passes_the_exit_code_and_output(bwrap, workdir):
    r = runner.invoke(app, ["sandbox", "run", "-C", str(workdir), "--",
                            "sh", "-c", "echo hello; echo oops >&2; exit 7"])
    assert r.exit_code == 7
    assert "hello" in r.stdout


def test_run_reports_a_limit_with_its_own_code(bwrap, workdir):
    r = runner.invoke(app, ["sandbox", "run", "-C", str(workdir), "--timeout", "0.5", "--",
                            "sleep", "10"])
    assert r.exit_code == 124
    assert "stopped by the timeout limit" in r.stderr
    r = runner.invoke(app, ["sandbox", "run", "-C", str(workdir), "--memory-mb", "64", "--",
                            sys._base_executable, "-c", "x = 'a' * 10**9"])
    assert r.exit_code == 123


def test_run_needs_a_command_and_a_folder(workdir):
    r = runner.invoke(app, ["sandbox", "run", "-C", str(workdir)])
    assert r.exit_code == 2 and "give the command" in r.stderr  # one line, no traceback
    r = runner.invoke(app, ["sandbox", "run", "-C", str(workdir / "nope"), "--", "true"])
    assert r.exit_code == 2 and "not a folder" in r.stderr


@pytest.mark.slow
def test_validate_command_replays_a_task_file(bwrap, tmp_path, calc_task):
    row = {"instance_id": "calc__add", "repo": "local/calc", **calc_task,
           "FAIL_TO_PASS": ["tests/test_add.py::test_add"],
           "PASS_TO_PASS": ["tests/test_mul.py::test_mul"]}
    broken = {**row, "instance_id": "calc__wrong", "FAIL_TO_PASS": ["tests/test_mul.py::test_mul"]}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(row) + "\n" + json.dumps(broken) + "\n")
    out = tmp_path / "out"
    args = ["validate", str(tmp_path / "tasks.jsonl"), "-o", str(out),
            "--set", "validation.reruns=1", "--set", "sandbox.backend=bwrap",
            "--set", f"env.cache_dir={tmp_path / 'envs'}",
            "--set", f"env.inherit_site_packages=[{SITE}]"]
    r = runner.invoke(app, args)
    assert r.exit_code == 1, r.stdout
    assert "valid    calc__add" in r.stdout
    assert "invalid  calc__wrong (f2p_mismatch)" in r.stdout
    assert "1/2 tasks still prove themselves" in r.stdout
    from datagen.manifest import query

    _, rows = query(out, "SELECT instance_id, status FROM validations ORDER BY instance_id")
    assert rows == [("calc__add", "valid"), ("calc__wrong", "invalid")]
    _, runs = query(out, "SELECT command, status FROM runs")
    assert runs == [("validate", "finished")]


@pytest.mark.slow
def test_check_proves_bwrap_contains_every_probe(bwrap):
    r = runner.invoke(app, ["sandbox", "check", "--backend", "bwrap"])
    assert r.exit_code == 0, r.stdout
    assert "back end: bwrap" in r.stdout
    assert "NOT CONTAINED" not in r.stdout and r.stdout.count("contained") >= 10


@pytest.mark.slow
def test_check_says_loudly_what_the_fallback_cannot_isolate():
    r = runner.invoke(app, ["sandbox", "check", "--backend", "subprocess"])
    assert r.exit_code == 1
    assert "NOT ENFORCED: shares the host network" in r.stdout
    lines = {line.split()[0]: line for line in r.stdout.splitlines() if line.startswith("  ")}
    assert "NOT CONTAINED" in lines["network"]


@pytest.mark.parametrize("command", [["sandbox", "check", "-b", "nope"],
                                     ["sandbox", "run", "-b", "bwarp", "-C", "{w}", "--",
                                      "touch", "ran"]])
def test_an_unknown_back_end_is_refused_not_replaced(workdir, command):
    r = runner.invoke(app, [part.replace("{w}", str(workdir)) for part in command])
    assert r.exit_code == 2
    assert "'auto', 'bwrap', 'subprocess'" in r.output
    assert "back end:" not in r.output and not (workdir / "ran").exists()
    from datagen.errors import UserError
    from datagen.sandbox import get_sandbox

    with pytest.raises(UserError, match="unknown sandbox back end 'bwarp'.*auto, bwrap"):
        get_sandbox("bwarp")


def _documented_example(doc: str) -> list[str]:
    line = next(x.strip() for x in doc.splitlines() if "-- python -m pytest" in x)
    return shlex.split(line)[1:]  # without "datagen"


def _tiny_repo(root: Path, answer: int) -> Path:
    repo = root / "repo"
    (repo / "src" / "calc").mkdir(parents=True, exist_ok=True)
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "tests" / "test_add.py").write_text(
        f"from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == {answer}\n")
    return repo


@pytest.mark.slow
def test_the_documented_by_hand_example_runs_the_repo_tests(bwrap, tmp_path, monkeypatch):
    from datagen.cli.sandbox import run as run_command

    args = _documented_example(run_command.__doc__)
    doc = (Path(__file__).parents[2] / "docs" / "sandbox.md").read_text()
    assert "datagen " + shlex.join(args) in doc  # the docs show the same command
    repo = _tiny_repo(tmp_path, 5)
    monkeypatch.chdir(tmp_path)  # ./repo as in the example
    offline = ["--set", f"env.cache_dir={tmp_path / 'envs'}",
               "--set", f"env.inherit_site_packages=[{SITE}]"]
    cut = args.index("--")
    full = args[:cut] + offline + args[cut:]
    r = runner.invoke(app, full)
    assert r.exit_code == 0, r.output
    assert "1 passed" in r.stdout
    _tiny_repo(tmp_path, 6)  # now the test fails: pytest's own exit code comes through
    r = runner.invoke(app, full)
    assert r.exit_code == 1 and "1 failed" in r.stdout
    assert len(list((tmp_path / "envs").glob("*/ok.json"))) == 1  # one env, reused
    assert repo.is_dir()


def test_a_missing_command_is_named_with_exit_127(any_sandbox, workdir):
    r = runner.invoke(app, ["sandbox", "run", "-b", any_sandbox.name, "-C", str(workdir), "--",
                            "no-such-command-xyz", "-q"])
    assert r.exit_code == 127, r.output
    assert "sandbox: command not found: no-such-command-xyz" in r.stderr
    assert "--env auto" in r.stderr  # without an env, say how to get the repo's python
    assert "setpriv" not in r.stderr and "bwrap:" not in r.stderr and "execvp" not in r.stderr
    (workdir / "data.txt").write_text("x")
    r = runner.invoke(app, ["sandbox", "run", "-b", any_sandbox.name, "-C", str(workdir), "--",
                            "./data.txt"])
    assert r.exit_code == 126 and "command not executable: ./data.txt" in r.stderr


@pytest.mark.slow
def test_env_setup_failure_names_pips_error(bwrap, tmp_path, monkeypatch):
    repo = _tiny_repo(tmp_path, 5)
    (repo / "requirements.txt").write_text("nosuchpkg @ file:///no-such-package-dir\n")
    r = runner.invoke(app, ["sandbox", "run", "-C", str(repo), "--env", "auto",
                            "--set", f"env.cache_dir={tmp_path / 'envs'}",
                            "--set", f"env.inherit_site_packages=[{SITE}]", "--", "true"])
    assert r.exit_code == 2  # the CLI prints it as one line
    message = r.stderr.strip().splitlines()[-1]  # after the env-build notices
    assert "dependencies (requirements.txt) failed (exit " in message
    assert "no-such-package-dir" in message and "failed.json" in message
