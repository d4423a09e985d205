"""A repo whose (non-Python) environment cannot be built: its ``repo_envs`` row names the
install step that failed and keeps the installer's last words, as Python envs' rows do.
A real build of a Go module whose go.mod requires a module no registry here serves."""

from __future__ import annotations

from tests import tools
from tests.conftest import MIT, git, write_tree
from tests.synth.buildkit import run_build, sql

GO_MOD = "module example.com/needsdep\n\ngo 1.19\n\nrequire example.invalid/dep v1.0.0\n"


@tools.needs("go")
def test_the_failed_step_and_its_log_reach_the_manifest(tmp_path):
    repo = write_tree(tmp_path / "needsdep", {
        "LICENSE": MIT, "go.mod": GO_MOD,
        "calc.go": "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
        "calc_test.go": 'package calc\n\nimport "testing"\n\n'
                        "func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(1)\n\t}\n}\n"})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc")
    out = tmp_path / "out"
    proc = run_build([repo], out, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [(outcome, reason, step, tail)] = sql(out, "SELECT outcome, reason, failed_step, log_tail FROM repo_envs")
    assert outcome == "env_failed" and reason.startswith(("registry_unreachable", "env_setup_failed"))
    assert step == "go mod download"
    assert "example.invalid/dep" in tail
