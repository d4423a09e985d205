"""The agent scorer against a stand-in policy server, as the tests configure it."""

from __future__ import annotations

from pathlib import Path

from datagen.config.score import AgentRunConfig, DifficultyConfig
from datagen.config.teacher import TeacherConfig
from datagen.sandbox.isolation.select import untrusted_sandbox
from datagen.score.agent import AgentScorer
from datagen.teachers import make_teacher
from tests.agent.standin import MODEL
from tests.agent.tasks import env_config


def policy_config(base_url: str, cache: Path, **kw) -> TeacherConfig:
    opts = dict(model=MODEL, base_url=base_url, timeout_s=30, max_retries=0, backoff_base_s=0.01,
                backoff_max_s=0.05, max_concurrency=4, cache_dir=str(cache), api_key_env="DATAGEN_TEST_KEY")
    return TeacherConfig(**{**opts, **kw})


def scorer(server, folder: Path, work: Path, k: int = 1, store: Path | None = None, **agent) -> AgentScorer:
    """K runs per task, two at a time, small limits; the policy's calls cached under ``work``."""
    opts = dict(step_limit=8, wall_time_s=600, max_tokens=100_000, command_timeout_s=120, workers=2)
    cfg = DifficultyConfig(mode="agent", k=k, test_timeout_s=240, agent=AgentRunConfig(**{**opts, **agent}))
    teacher = make_teacher(policy_config(server.base_url, work / "teacher-cache"))
    return AgentScorer(cfg, teacher, untrusted_sandbox("auto"), env=env_config(folder), work_root=work,
                       store=store)
