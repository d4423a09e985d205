"""The pool's dataset card (``OUT/README.md``): the Hub's YAML header and the statistics.

Three configs: ``default`` (the pool rows under ``data/``), ``verl`` and ``skyrl`` (the
exports), each with one ``data_files`` entry per split present. ``CardInfo`` (what the card
and the exports say about the pool) lives here, so ``exports`` imports this module and
never the other way round.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml
from pydantic import Field

from datagen.config.base import StrictModel
from datagen.records import ShardRow
from datagen.records.hub import size_category
from datagen.records.pool import PoolDropRow, PoolRow


class CardInfo(StrictModel):
    """What the dataset card and the exports say about the pool."""

    pretty_name: str = "datagen RL pool"
    license: str = "other"
    tags: list[str] = Field(default_factory=lambda: ["code", "agents", "reinforcement-learning", "swe-bench"])
    description: str = "RL instructions for coding agents, built by `datagen build rl-pool`."
    data_source: str = Field("datagen/swe", description="verl/SkyRL data_source (selects the reward function)")
    ability: str = "coding"
    env_class: str = Field("null", description="SkyRL env_class (mini-swe-agent owns the loop: 'null')")
    skyrl_image: str | None = Field(None, description="SkyRL rows' image_name (None: SkyRL's mini-swe-agent builds "
                                    "the environment; a name makes it run that image)")
    max_rows_per_shard: int = Field(10_000, ge=1)
    soundness: dict[str, int] | None = Field(None, description="soundness flag -> tasks it removed (None: the "
                                             "checks did not run)")


def header(info: CardInfo, splits: list[str], n_rows: int) -> dict:
    def files(pattern: str) -> list[dict]:
        return [{"split": s, "path": pattern.format(split=s)} for s in splits]

    return {
        "license": info.license, "pretty_name": info.pretty_name, "tags": list(info.tags),
        "task_categories": ["text-generation"], "size_categories": [size_category(n_rows)],
        "configs": [
            {"config_name": "default", "default": True, "data_files": files("data/{split}-*.parquet")},
            {"config_name": "verl", "data_files": files("exports/verl/{split}.parquet")},
            {"config_name": "skyrl", "data_files": files("exports/skyrl/{split}.parquet")},
        ],
    }


def _table(title: str, counts: Counter) -> list[str]:
    if not counts:
        return ["", f"{title}: none."]
    return ["", f"| {title} | instructions |", "|---|---:|", *(f"| {k} | {v} |" for k, v in sorted(counts.items()))]


def write_card(out: Path, info: CardInfo, by_split: dict[str, list[PoolRow]], dropped: list[PoolDropRow],
               shards: list[ShardRow]) -> Path:
    """Write ``out/README.md``; only counts and names, so the same pool gives the same card."""
    rows = [r for split_rows in by_split.values() for r in split_rows]
    splits = [s for s, r in by_split.items() if r or s == "train"]
    lines = [
        "---", yaml.safe_dump(header(info, splits, len(rows)), sort_keys=False).rstrip(), "---", "",
        f"# {info.pretty_name}", "", info.description, "",
        "One row per instruction: a chat `prompt`, the environment (`repo`, `base_commit`,",
        "`repo_path`), the reward spec (`runner`, `fail_to_pass`, `pass_to_pass`, `test_patch`,",
        "`aux_checks`), `group_size` K, the policy `pass_rate` and `difficulty_band`, `perplexity`",
        "and lineage (`task_id`, `source_files`, `strategy`). Hand instructions out once with",
        "`datagen pool take . --n 256 --consumer run-17`.", "",
        "## Load", "", "```python", "import datasets",
        'pool = datasets.load_dataset("parquet", data_dir="data", split="train")',
        'verl = datasets.load_dataset("parquet", data_files={"train": "exports/verl/train.parquet"})',
        "```", "", "## Statistics",
    ]
    lines += _table("split", Counter(r.split for r in rows))
    lines += _table("difficulty band", Counter(r.difficulty_band for r in rows))
    lines += _table("dropped: reason", Counter(d.reason for d in dropped))
    if info.soundness is not None:
        lines += _table("removed by soundness flag", Counter(info.soundness))
    lines += _table("repository", Counter(r.repo for r in rows))
    lines += ["", "| file | rows | bytes |", "|---|---:|---:|"]
    lines += [*(f"| {s.path} | {s.rows} | {s.bytes} |" for s in shards), ""]
    path = out / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
