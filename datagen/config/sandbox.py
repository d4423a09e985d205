"""Recipe models for sandboxed execution and validation (the ``sandbox`` and
``validation`` sections of a recipe such as ``pipelines/validate.yaml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from datagen.config.base import StrictModel

BackendName = Literal["auto", "bwrap", "subprocess"]
BACKENDS: tuple[str, ...] = ("auto", "bwrap", "subprocess")


class SandboxLimits(StrictModel):
    """What one sandboxed command may use. Every limit is enforced by the back end that
    reports it in ``datagen sandbox check``; a run that hits one says which."""

    timeout_s: float = Field(300.0, gt=0, description="wall-clock limit")
    cpu_s: int = Field(600, gt=0, description="CPU seconds per process (RLIMIT_CPU)")
    memory_mb: int = Field(4096, gt=0, description="memory of the whole process tree")
    processes: int = Field(256, gt=0, description="processes and threads at once")
    file_size_mb: int = Field(1024, gt=0, description="largest file a process may write")
    tmp_size_mb: int = Field(512, gt=0, description="size of the private /tmp (tmpfs)")
    disk_mb: int = Field(
        2048, gt=0,
        description="what a run may write into its working copy (new and changed files); "
        "bwrap as root holds the writes in a tmpfs of this size, so they count against "
        "memory_mb too",
    )
    output_bytes: int = Field(1_000_000, gt=0, description="stdout/stderr kept, per stream")
    network: bool = Field(False, description="only environment setup turns this on")
    max_files: int = Field(
        200_000, gt=0,
        description="largest working copy (files and folders) a run may take over; bwrap as "
        "root hands every one to the sandbox uid, so a wrong --workdir is refused, not chowned",
    )


class SandboxConfig(StrictModel):
    backend: BackendName = "auto"
    limits: SandboxLimits = SandboxLimits()
    ro_paths: list[str] = Field(
        default_factory=list, description="extra host folders the sandbox may read"
    )


class MirrorsConfig(StrictModel):
    """Where environment setup fetches packages from instead of the public registries (a
    site's own mirror or proxy); each is written into every environment it concerns. Unset:
    the registries' defaults."""

    pypi: str | None = Field(None, description="a PyPI simple index URL (uv's default index, pip's index-url)")
    npm: str | None = Field(None, description="an npm registry URL (npm, pnpm, yarn, corepack)")
    goproxy: str | None = Field(None, description="GOPROXY for setup (e.g. https://goproxy.example/,direct)")
    gosumdb: str | None = Field(None, description="GOSUMDB for setup ('off' where sum.golang.org is unreachable)")
    cargo: str | None = Field(None, description="a crates.io replacement (sparse+https://.../ or a git index "
                              "URL), written as cargo source replacement in the env's CARGO_HOME")
    maven: str | None = Field(None, description="a Maven repository URL every request goes to (settings.xml "
                              "mirrorOf *)")

    def any(self) -> bool:
        return any(v for v in self.model_dump().values())


class EnvConfig(StrictModel):
    """Per-repo Python environments, cached by a hash of the repo's dependency files."""

    cache_dir: str | None = Field(None, description="default: $DATAGEN_CACHE/envs or ~/.cache")
    python: str | None = Field(None, description="base interpreter (default: the running one)")
    system_site_packages: bool = False
    inherit_site_packages: list[str] = Field(
        default_factory=list,
        description="site-packages folders the env may import from (e.g. a venv with pytest)",
    )
    test_requirements: list[str] = Field(default_factory=lambda: ["pytest"])
    setup_timeout_s: float = Field(900.0, gt=0)
    pythons: list[str] = Field(
        default_factory=list,
        description="interpreters to choose from (names such as python3.12, or paths; pyenv versions are "
        "found too); the newest that fits the repo's requires-python (and classifiers) is used, a mismatch "
        "is recorded in the plan. Empty: only `python` (or the running interpreter)")
    installer: Literal["uv", "pip"] = Field("uv", description="uv (uv venv + uv pip install, one wheel cache "
                                            "shared by all envs); pip, or when uv is not found")
    repair_rounds: int = Field(3, ge=0, description="teacher rounds to repair a plan whose env fails to build, "
                               "whose suite fails to collect or has no passing test (only with a teacher)")
    plan: str | None = Field(None, description="a plan file (JSON or YAML EnvPlan) used for every repo; wins "
                             "over rules and teacher")
    overrides: dict[str, str] = Field(default_factory=dict, description="repo name -> plan file, for that repo; "
                                      "wins over rules and teacher")
    mirrors: MirrorsConfig = Field(default_factory=MirrorsConfig, description="package mirrors for env setup "
                                   "(PyPI index, npm registry, GOPROXY, cargo source replacement, Maven mirror)")


class ValidationConfig(StrictModel):
    reruns: int = Field(3, ge=1, description="runs per side; tests that change are flaky")
    workers: int = Field(0, ge=0, description="parallel runs (0 = one per core)")
    test_timeout_s: float = Field(300.0, gt=0)


class ValidateRecipe(StrictModel):
    sandbox: SandboxConfig = SandboxConfig()
    env: EnvConfig = EnvConfig()
    validation: ValidationConfig = ValidationConfig()
