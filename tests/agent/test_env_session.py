"""The agent's environment sends a run's commands through one sandbox session and gives the
same observations as a sandbox per command; its writes are the working copy's after close."""

from __future__ import annotations

import pytest

from datagen.config.sandbox import SandboxLimits
from datagen.sandbox.isolation.select import bwrap_works
from datagen.score.agent.env import SandboxEnvironment

COMMANDS = ["pwd; ls", "echo hi > made.txt && cat made.txt", "cd /tmp; pwd", "pwd; echo ${X:-unset}",
            "export X=1; echo err >&2; exit 3", "sleep 5 & echo bg", "echo $X; ls made.txt"]


def _observations(env: SandboxEnvironment) -> list[tuple[str, int]]:
    out = [env.execute({"command": c}) for c in COMMANDS]
    out.append(env.execute({"command": "pwd"}, cwd="/tmp"))
    return [(o["output"], o["returncode"]) for o in out]


def test_a_session_sees_what_a_sandbox_per_command_sees(tmp_path):
    pytest.importorskip("minisweagent")
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    from datagen.sandbox.isolation.bwrap import BwrapSandbox

    seen = {}
    for session in (True, False):
        work = tmp_path / f"work-{session}" / "copy"
        work.mkdir(parents=True)
        (work / "a.txt").write_text("a\n")
        env = SandboxEnvironment(workdir=work, sandbox=BwrapSandbox(), limits=SandboxLimits(timeout_s=20),
                                 run_env={}, session=session)
        seen[session] = [(text.replace(str(work), "WORK"), code) for text, code in _observations(env)]
        assert (env.session is not None) == session
        env.close()
        assert (work / "made.txt").read_text() == "hi\n"
        assert env.serialize()["info"]["sandbox_session"] == ("on" if session else env.session_error)
    assert seen[True] == seen[False]
    assert seen[True][3] == ("WORK\nunset\n", 0) and seen[True][4] == ("err\n", 3)
    assert seen[True][-1] == ("/tmp\n", 0)
