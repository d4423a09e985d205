"""Recipe model of ``datagen build all`` (``pipelines/all.yaml``): the three builds in a row."""

from __future__ import annotations

from pydantic import Field

from datagen.config.base import StrictModel

STAGES = ("cpt_corpus", "tasks", "rl_pool")  # run order; each stage's folder is its build name
STAGE_FIELDS = frozenset({"enabled", "recipe", "inputs", "set"})


class StageRef(StrictModel):
    """One stage: the recipe it runs and the ``--set`` overrides applied to it."""

    enabled: bool = Field(True, description="false skips the stage (a later stage reads what is there)")
    recipe: str = Field(description="recipe file (relative to this recipe's folder) or bundled name")
    inputs: list[str] | None = Field(None, description="this stage's repos instead of the shared `inputs` "
                                     "(the rl-pool stage reads OUT/tasks)")
    set: list[str] = Field(default_factory=list, description="--set overrides of the stage's recipe")


class AllRecipe(StrictModel):
    """``datagen build all``: repos -> CPT shards, tasks and the RL pool, one folder per stage."""

    inputs: list[str] = Field(default_factory=lambda: ["sample_data/*"],
                              description="repos given to the cpt-corpus and tasks stages")
    output: str = Field("out/all", description="stages write OUT/cpt-corpus, OUT/tasks, OUT/rl-pool")
    workers: int | None = Field(None, ge=1, description="every stage's workers (null: each recipe's)")
    cpt_corpus: StageRef = Field(default_factory=lambda: StageRef(recipe="cpt-corpus.yaml"),
                                 description="the corpus build")
    tasks: StageRef = Field(default_factory=lambda: StageRef(recipe="tasks.yaml"), description="the tasks build")
    rl_pool: StageRef = Field(default_factory=lambda: StageRef(recipe="rl-pool.yaml"),
                              description="the pool build (reads OUT/tasks)")


def route_overrides(overrides: list[str] | None) -> tuple[list[str], dict[str, list[str]]]:
    """Split ``--set`` items: ``tasks.synth.scale=3`` goes to the tasks stage's recipe,
    ``tasks.enabled=false`` and top-level keys to the ``all`` recipe."""
    own: list[str] = []
    stages: dict[str, list[str]] = {s: [] for s in STAGES}
    for item in overrides or []:
        head, _, rest = item.partition(".")
        field = rest.split("=", 1)[0].split(".", 1)[0]
        if head in stages and rest and field not in STAGE_FIELDS:
            stages[head].append(rest)
        else:
            own.append(item)
    return own, stages
