"""The GPU-node recipe of the agent difficulty step: ``datagen job slurm`` serves the pool's
policy with ``vllm serve`` and runs ``datagen build rl-pool`` in agent mode against it."""

from __future__ import annotations

import subprocess

from typer.testing import CliRunner

from datagen.cli.app import app


def test_slurm_recipe_serves_the_policy_and_runs_the_agent_step():
    res = CliRunner().invoke(app, [
        "job", "slurm", "-r", "rl-pool", "--block", "policy", "--gpus", "8", "--tp", "2",
        "--set", "policy.model=org/Coder-32B", "--set", "policy.vllm.max_model_len=65536", "--",
        "datagen", "build", "rl-pool", "-t", "/data/tasks", "--set", "difficulty.mode=agent",
        "--set", "difficulty.agent.context_limit=65536", "--set", "difficulty.agent.context_budget=48000"])
    assert res.exit_code == 0, res.output
    script = res.output
    assert "vllm serve org/Coder-32B" in script and "--tensor-parallel-size 2" in script
    assert "--max-model-len 65536" in script
    assert "datagen build rl-pool -t /data/tasks --set difficulty.mode=agent" in script
    assert '--set "policy.base_url=http://127.0.0.1:${PORT}/v1"' in script  # 4 replicas, spread by the client
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0
