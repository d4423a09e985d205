"""Recipe model of ``datagen build cpt-corpus`` (default: ``pipelines/cpt-corpus.yaml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from datagen.config.base import StrictModel
from datagen.config.curate import DecontamConfig, NearDedupConfig, QualityConfig, SecretsConfig, SyntaxConfig
from datagen.config.executor import ExecutorConfig
from datagen.config.pack import PackConfig
from datagen.config.quality import QualityModelConfig
from datagen.config.score import CorpusPerplexityConfig


class CrawlConfig(StrictModel):
    max_file_bytes: int = Field(1_000_000, gt=0, description="larger files are skipped: too_large")
    respect_gitignore: bool = True
    rules: str = Field("crawl.yaml", description="rule pack in filters/ (vendored, generated, binary)")
    licenses: str | list[str] = Field(
        "permissive", description="a list name in filters/licenses.yaml, 'any', or SPDX ids"
    )
    allow_unknown_license: bool | None = Field(None, description="None: the rule pack's default")
    repo_names: dict[str, str] = Field(default_factory=dict, description="input path -> repo name")
    files_per_task: int = Field(2000, gt=0, description="files per datatrove task (crawl stage)")


class DedupConfig(StrictModel):
    exact: bool = True
    near: NearDedupConfig = NearDedupConfig()
    keep: Literal["longest", "newest", "stars", "path"] = Field(
        "longest", description="which copy survives (datagen.curate.keep): longest (exact: first by "
        "(repo, path)), newest / stars (repo_metadata), path (first by (repo, path))",
    )
    repo_metadata: str | None = Field(
        None, description="per-repo metadata (JSON, YAML, JSONL or CSV: repo, stars, date) for keep",
    )

    @model_validator(mode="after")
    def _check(self) -> DedupConfig:
        if self.keep in ("newest", "stars") and not self.repo_metadata:
            raise ValueError(f"keep={self.keep} needs repo_metadata (a file with each repo's "
                             f"{'date' if self.keep == 'newest' else 'stars'})")
        return self


class MixConfig(StrictModel):
    """The language mix after dedup (``datagen.curate.mix``): weight < 1 keeps that share of a
    language's files (a seeded content-hash choice), weight > 1 repeats them."""

    weights: dict[str, float] = Field(default_factory=dict, description="language -> weight; empty = off")
    default_weight: float = Field(1.0, ge=0.0, description="weight of languages not listed")
    max_repeat: int = Field(4, ge=1, description="cap on the copies of one file")
    seed: int = Field(0, description="salt of the content-hash choice")

    @model_validator(mode="after")
    def _check(self) -> MixConfig:
        bad = sorted(k for k, w in self.weights.items() if w < 0)
        if bad:
            raise ValueError(f"weights: negative weight for {', '.join(bad)}")
        return self

    @property
    def enabled(self) -> bool:
        return bool(self.weights) or self.default_weight != 1.0


class ShardsConfig(StrictModel):
    max_bytes: int = Field(256 * 1024 * 1024, gt=0, description="text bytes per shard (cap)")
    row_group_rows: int = Field(1000, gt=0)
    compression: Literal["zstd", "snappy", "gzip", "none"] = "zstd"
    compression_level: int = 3
    split: str = "train"


class CardConfig(StrictModel):
    pretty_name: str = "datagen CPT code corpus"
    tags: list[str] = Field(default_factory=lambda: ["code", "datagen", "continued-pretraining"])


class CptCorpusRecipe(StrictModel):
    name: str = "cpt-corpus"
    inputs: list[str] = Field(
        default_factory=lambda: ["sample_data/*"],
        description="dirs / git repos / globs (sample_data/: the bundled repos)",
    )
    output: str = "out/cpt-corpus"
    workers: int = Field(1, ge=1)
    memory_mb: int = Field(
        1024, ge=512, description="memory budget of each process after the crawl, MB: DuckDB's "
        "memory_limit (it spills to the work folder past it) and the packing buffers follow it",
    )
    executor: ExecutorConfig = ExecutorConfig()
    crawl: CrawlConfig = CrawlConfig()
    dedup: DedupConfig = DedupConfig()
    mix: MixConfig = MixConfig()
    quality: QualityConfig = QualityConfig()
    decontam: DecontamConfig = DecontamConfig()
    syntax: SyntaxConfig = SyntaxConfig()
    secrets: SecretsConfig = SecretsConfig()
    perplexity: CorpusPerplexityConfig = CorpusPerplexityConfig()
    quality_model: QualityModelConfig = QualityModelConfig()
    shards: ShardsConfig = ShardsConfig()
    card: CardConfig = CardConfig()
    pack: PackConfig = PackConfig()
