"""Go: a GOPATH-era repo (no go.mod) gets one in its environment and its task replays with
plain git and its own scripts; the Go profile maps each source line to the tests that run
it (``-coverprofile`` per top-level test), so candidates land only in code a test runs.
Real go in the real sandbox; skipped where go is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.harness.profiles.go import cover_profile_lines, module_path
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from tests import tools
from tests.sandbox.test_profiles_replay_more import replay_validated

needs_go = tools.needs("go")

LEGACY = {  # no go.mod; the import comment names the module; the external test package imports it
    "calc/calc.go": 'package calc // import "example.com/legacy/calc"\n\n'
                    "func Add(a, b int) int {\n\treturn a + b\n}\n\n"
                    "func Mul(a, b int) int {\n\treturn a * b\n}\n\n"
                    "func Unused(a int) int {\n\treturn a * 7\n}\n",
    "calc/calc_test.go": 'package calc_test\n\nimport (\n\t"testing"\n\n\t"example.com/legacy/calc"\n)\n\n'
                         "func TestAdd(t *testing.T) {\n\tif calc.Add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n\n"
                         "func TestMul(t *testing.T) {\n\tt.Run(\"small\", func(t *testing.T) {\n"
                         "\t\tif calc.Mul(2, 3) != 6 {\n\t\t\tt.Fatal(\"mul\")\n\t\t}\n\t})\n}\n",
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_module_path_of_a_repo_without_go_mod(tmp_path):
    assert module_path(_write(tmp_path / "a", LEGACY)) == ("example.com/legacy", "import comment in calc/calc.go")
    no_comment = {k: v.replace(' // import "example.com/legacy/calc"', "") for k, v in LEGACY.items()}
    path, origin = module_path(_write(tmp_path / "b", no_comment))
    assert path == "example.com/legacy" and "import" in origin  # from its own imports of calc/
    # nu7hatch/gouuid's shape: one root package ``uuid``, its example tests import it by path
    rooted = {"uuid.go": "package uuid\n\nfunc New() string { return \"u\" }\n",
              "example_test.go": 'package uuid_test\n\nimport (\n\t"fmt"\n\t"github.com/someone/gouuid"\n)\n\n'
                                 "func ExampleNew() {\n\tfmt.Println(uuid.New())\n\t// Output: u\n}\n"}
    assert module_path(_write(tmp_path / "gouuid", rooted)) == \
        ("github.com/someone/gouuid", "the path its root's external tests import it by")
    alone = {"x.go": "package x\n\nfunc F() {}\n", "x_test.go": "package x\n"}
    assert module_path(_write(tmp_path / "go-thing", alone)) == ("go-thing", "the folder name")


def test_a_cover_profile_gives_the_lines_that_ran():
    profile = ("mode: set\nexample.com/m/a.go:3.24,5.2 1 1\nexample.com/m/a.go:7.24,9.2 1 0\n"
               "example.com/other/b.go:1.1,2.2 1 1\n")
    assert cover_profile_lines(profile, "example.com/m") == {"a.go": {3, 4, 5}}


@needs_go
def test_detect_and_plan_write_a_go_mod_only_where_there_is_none(tmp_path):
    src = _write(tmp_path / "legacy", LEGACY)
    profile = get_profile("go")
    paths = sorted(LEGACY)
    assert profile.detect(src, paths)
    plan = profile.plan(src)
    assert plan.write_files["go.mod"].startswith("module example.com/legacy\n")
    assert [s.args for s in plan.install] == [["go", "mod", "tidy"]]
    assert not profile.detect(src, [*paths, "sub/go.mod"])  # modules in subfolders only: not one module
    (src / "go.mod").write_text("module example.com/legacy\n\ngo 1.19\n")
    assert profile.plan(src).write_files == {}


@needs_go
def test_a_gopath_era_task_replays_with_its_own_scripts(tmp_path):
    bug = ("calc/calc.go", "return a + b", "return a - b")
    replay_validated(tmp_path, "go", _write(tmp_path / "fixture" / "legacy", LEGACY), bug,
                     {"example.com/legacy/calc::TestAdd"})


@needs_go
def test_a_suite_that_go_vet_rejects_still_runs(tmp_path):
    """``go test`` runs vet's printf check first and fails the package (nu7hatch/gouuid: a
    ``%d`` given a string); the tests grade the task, so vet is off in every run and script."""
    vetted = {**LEGACY, "calc/calc_test.go": LEGACY["calc/calc_test.go"].replace(
        'if calc.Add(2, 3) != 5 {', 't.Logf("%d", "not a number")\n\tif calc.Add(2, 3) != 5 {')}
    bug = ("calc/calc.go", "return a + b", "return a - b")
    replay_validated(tmp_path, "go", _write(tmp_path / "fixture" / "vetted", vetted), bug,
                     {"example.com/legacy/calc::TestAdd"})


@needs_go
def test_coverage_maps_each_line_to_the_tests_that_run_it(tmp_path):
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    src = _write(tmp_path / "legacy", LEGACY)
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=180, processes=256)
    env = ensure_env(get_profile("go"), src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    (tmp_path / "scratch").mkdir()
    base = measure_baseline(SuiteRunner("go", src, sandbox, limits, env, tmp_path / "scratch"), 1, True)
    assert base.reason is None, base.detail
    pkg = "example.com/legacy/calc"
    assert base.tests_reaching("calc/calc.go", 3, 5) == [f"{pkg}::TestAdd"]
    assert base.tests_reaching("calc/calc.go", 7, 9) == [f"{pkg}::TestMul", f"{pkg}::TestMul/small"]
    assert base.tests_reaching("calc/calc.go", 11, 13) == []  # no test runs Unused


QUOTED = {  # xxhash's subtests are named input="asd": test2json writes them as JSON strings
    "go.mod": "module example.com/q\n\ngo 1.19\n",
    "q_test.go": 'package q\n\nimport "testing"\n\nfunc TestAll(t *testing.T) {\n'
                 '\tfor _, in := range []string{`input="asd"`, "a<b&c", `back\\slash`} {\n'
                 "\t\tt.Run(in, func(t *testing.T) {})\n\t}\n}\n",
}


@needs_go
def test_the_eval_script_finds_subtests_whose_names_json_escapes(tmp_path):
    """The eval script greps test2json's events: a name with quotes, <, & or a backslash is
    a JSON string there, so the raw name never matched and a passing task failed its replay."""
    import subprocess

    repo = _write(tmp_path / "q", QUOTED)
    ids = ["example.com/q::TestAll", 'example.com/q::TestAll/input="asd"', "example.com/q::TestAll/a<b&c",
           "example.com/q::TestAll/back\\slash"]
    profile = get_profile("go")
    script = profile.eval_script(profile.plan(repo), ids)
    run = subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True, timeout=300,
                         env={"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tmp_path),
                              "GOCACHE": str(tmp_path / "gocache"), "GOPATH": str(tmp_path / "gopath")})
    assert run.returncode == 0, run.stdout[-2000:]
    bad = profile.eval_script(profile.plan(repo), [*ids, 'example.com/q::TestAll/input="nope"'])
    run = subprocess.run(["bash", "-c", bad], cwd=repo, capture_output=True, text=True, timeout=300,
                         env={"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tmp_path),
                              "GOCACHE": str(tmp_path / "gocache"), "GOPATH": str(tmp_path / "gopath")})
    assert run.returncode != 0 and 'NOT PASSED: example.com/q::TestAll/input="nope"' in run.stdout
