"""The teacher's repair of the repos whose env plan failed, between baselines and proposing.

Runs in the build's process (the teacher never runs in a sandboxed stage): for each repo
whose baseline says ``env_setup_failed``, ``no_tests`` or ``no_passing_tests``, and whose
plan is not a user's, ``synth/env_repair.py`` asks for up to ``env.repair_rounds`` changed
plans and tries each; a plan that works goes to ``<work>/env-plans/<repo>.json`` and the
repo's stored baseline is dropped, so the next ``measure_baselines`` measures it again with
that plan. Every round is kept in ``<work>/env-repairs/<repo>.json`` (a resumed build does
not ask again).
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from datagen.builds.tasks.sandboxed import baseline_path, run_limits
from datagen.config.tasks import TasksRecipe
from datagen.runtime.repo_stage import store_json
from datagen.sandbox.envs.cache import load_plan
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.synth.env_repair import REPAIRABLE, Failure, repair, try_plan


def repair_envs(cfg: TasksRecipe, states, work: Path, teacher, console: Console) -> bool:
    """Repair what can be; True when some repo got a new plan (its baseline is to be measured)."""
    from datagen.sandbox.isolation.select import untrusted_sandbox

    todo = [s for s in states if s.baseline is not None and s.baseline.reason in REPAIRABLE
            and get_profile(s.row.runner).repairable and not (cfg.env.plan or cfg.env.overrides.get(s.repo.name))
            and not (work / "env-repairs" / f"{s.repo.name}.json").exists()]
    if not todo or teacher is None or not cfg.env.repair_rounds:
        return False
    sandbox = untrusted_sandbox(cfg.sandbox.backend)
    changed = False
    for s in todo:
        name, src = s.repo.name, work / "src" / s.repo.name
        record = work / "envs" / f"{name}.json"
        info = json.loads(record.read_text()) if record.is_file() else {}
        profile = get_profile(s.row.runner)
        plan = load_plan(work / "env-plans" / f"{name}.json", "keep") if \
            (work / "env-plans" / f"{name}.json").is_file() else profile.configured_plan(src, cfg.env, name)
        failure = Failure(s.baseline.reason, s.baseline.detail, info.get("log_tail", ""), info.get("failed_step", ""))
        console.print(f"[cyan]env repair[/] {name}: {failure.kind} ({cfg.env.repair_rounds} rounds at most)")

        def attempt(candidate, src=src, profile=profile):
            return try_plan(profile, src, candidate, cfg.env, sandbox, run_limits(cfg), work / "scratch",
                            cfg.sandbox.limits)

        result = repair(name, src, plan, failure, teacher, cfg.env.repair_rounds, attempt)
        store_json(work / "env-repairs" / f"{name}.json",
                   {"rounds": result.rounds, "seconds": result.seconds, "tokens": result.tokens,
                    "kept": result.plan is not None})
        if result.plan is not None:
            store_json(work / "env-plans" / f"{name}.json", json.loads(result.plan.model_dump_json()))
            baseline_path(work, name).unlink(missing_ok=True)
            changed = True
    return changed
