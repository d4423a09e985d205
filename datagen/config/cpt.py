"""Recipe model of ``datagen build cpt-corpus`` (default: ``pipelines/cpt-corpus.yaml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

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
    quality: QualityConfig = QualityConfig()
    decontam: DecontamConfig = DecontamConfig()
    syntax: SyntaxConfig = SyntaxConfig()
    secrets: SecretsConfig = SecretsConfig()
    perplexity: CorpusPerplexityConfig = CorpusPerplexityConfig()
    quality_model: QualityModelConfig = QualityModelConfig()
    shards: ShardsConfig = ShardsConfig()
    card: CardConfig = CardConfig()
    pack: PackConfig = PackConfig()
