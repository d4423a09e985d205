"""Recipe model of ``datagen build tasks`` (``pipelines/tasks.yaml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from datagen.config.base import StrictModel
from datagen.config.cpt import CrawlConfig
from datagen.config.executor import ExecutorConfig
from datagen.config.sandbox import EnvConfig, SandboxConfig
from datagen.config.teacher import TeacherConfig


class BaselineConfig(StrictModel):
    runs: int = Field(3, ge=1, description="whole-suite runs per repo; a test that does not pass "
                      "in every run is flaky and left out of every task")
    coverage: bool = Field(True, description="map source lines to the tests that reach them "
                           "(coverage.py dynamic contexts) and target only covered entities")


class SynthConfig(StrictModel):
    families: list[str] = Field(
        default_factory=lambda: ["procedural", "removal", "feature_removal", "feature", "history", "combine",
                                 "lm_rewrite", "evolve"],
        description="task families to run (the names the family registry knows: procedural, removal, "
        "feature_removal, feature, history, combine, lm_rewrite, evolve); lm_rewrite and evolve need a "
        "teacher and are skipped (recorded) without one")
    strategies: list[str] = Field(default_factory=list, description="only these strategy names "
                                  "(empty: every registered one of the chosen families)")
    seeds_per_pair: int = Field(1, ge=1, description="seeds tried per (entity, strategy)")
    max_candidates_per_entity: int = Field(2, ge=1, description="candidates one entity may be given; "
                                           "they are drawn round-robin over files and entities, so each "
                                           "entity gets its first before any gets its second")
    max_candidates_per_repo: int = Field(5000, ge=1, description="the repo's candidate budget: single bugs "
                                         "plus the combine share")
    max_tasks_per_entity: int = Field(2, ge=1, description="tasks one function (entity) may yield; more "
                                      "validated candidates of it are dropped as entity_quota")
    min_entity_lines: int = Field(2, ge=1, description="smaller entities are not targeted")
    combine_share: float = Field(0.25, ge=0, lt=1, description="share of each repo's budget spent on "
                                 "combining validated single bugs into multi-location tasks")
    feature_share: float = Field(0.25, ge=0, lt=1, description="share of each repo's budget spent on "
                                 "feature tasks: the functions a group of tests reaches and the rest of the "
                                 "suite reaches least, their bodies removed as one unit (docs/tasks.md)")
    feature_lines: tuple[int, int] = Field((30, 400), description="least and most changed lines of a feature "
                                           "task's fix (added plus removed)")
    feature_entities: tuple[int, int] = Field((2, 40), description="least and most functions a feature "
                                              "task removes")
    feature_multi_file: bool = Field(True, description="features that span files are proposed first")
    combine_size: tuple[int, int] = Field((2, 4), description="bugs merged per combined task")
    history_commits: int = Field(200, ge=0, description="newest commits of a git input to mine")
    lm_rewrites_per_repo: int = Field(20, ge=0, description="functions the teacher rewrites per repo")
    scale: int = Field(1, ge=0, description="evolve: harder variants asked per validated task "
                       "(25 for the full scale-up); 0 turns evolve off")
    near_dup_jaccard: float = Field(0.8, gt=0, le=1, description="a variant whose patch is this "
                                    "similar to a kept one is dropped")


class ValidationStage(StrictModel):
    full_runs: int = Field(2, ge=1, description="whole-suite runs of a candidate that broke a "
                           "covering test; FAIL_TO_PASS must fail in all of them")
    test_timeout_s: float = Field(120.0, gt=0, description="wall-clock limit of one test run")


class StatementConfig(StrictModel):
    styles: list[Literal["issue", "terse"]] = Field(
        default_factory=lambda: ["issue", "terse"],
        description="statement styles, assigned to tasks in turn (a teacher is needed; "
        "without one every task gets a 'template' statement)")
    max_output_chars: int = Field(3000, gt=0, description="test output shown to the teacher")
    redact_secrets: bool = Field(True, description="run the secrets step on statements and patches")
    give_implicit_names: bool = Field(True, description="add to a statement the names and messages its failing "
                                      "tests need that only the fix shows (the B2 soundness check's list), and ask "
                                      "the teacher for them: without them an honest agent cannot pass the tests")


class SnapshotConfig(StrictModel):
    redact_pii: bool = Field(
        True, description="replace e-mails and IP addresses in packaging metadata and license files too "
        "(by stand-ins: name-hash@example.com, 192.0.2.x), as everywhere else; secrets are always replaced "
        "(when statement.redact_secrets). On by default: tasks are published, and the stand-ins keep every "
        "file valid, so keeping real addresses buys nothing; off keeps them there (they are public on PyPI)")


class TasksRecipe(StrictModel):
    """``datagen build tasks``: repos with test suites -> verified agent tasks."""

    inputs: list[str] = Field(default_factory=lambda: ["sample_data/*"], description="dirs / git repos / "
                              "globs; a relative path that does not exist is looked up in the bundled sample_data/")
    output: str = "out/tasks"
    workers: int = Field(1, ge=1, description="parallel sandboxed test runs (local); parallel tasks (ray)")
    executor: ExecutorConfig = Field(ExecutorConfig(), description="where the sandboxed stages run (baselines, "
                                     "validation): one datatrove task per repo on slurm or ray")
    seed: int = Field(0, description="seed of every random choice (same seed, same tasks)")
    crawl: CrawlConfig = CrawlConfig()
    snapshot: SnapshotConfig = SnapshotConfig()
    sandbox: SandboxConfig = SandboxConfig()
    env: EnvConfig = EnvConfig(test_requirements=["pytest", "coverage"])
    baseline: BaselineConfig = BaselineConfig()
    synth: SynthConfig = SynthConfig()
    validation: ValidationStage = ValidationStage()
    statement: StatementConfig = StatementConfig()
    teacher: TeacherConfig = Field(
        default_factory=lambda: TeacherConfig(model="Qwen/Qwen2.5-Coder-32B-Instruct"),
        description="used only when teacher.base_url is set or the backend is vllm/transformers")

    @property
    def has_teacher(self) -> bool:
        return self.teacher.base_url is not None or self.teacher.backend != "openai"
