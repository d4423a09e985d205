"""The cpt-corpus dataset card as the Hub reads it: licenses, language, size, provenance."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml

from datagen import __version__
from datagen.builds.card import hub_licenses, write_card
from datagen.config.base import recipe_hash
from datagen.config.cpt import CptCorpusRecipe
from datagen.records import ShardRow


def _counts(**licenses: int) -> dict:
    kept = sum(licenses.values())
    return {"seen": kept + 3, "kept": kept, "kept_bytes": 100 * kept, "repos": 4,
            "dropped_by_reason": {"exact_duplicate": 2, "license": 1},
            "by_lang": [("python", kept - 1, 90), ("go", 1, 10)], "licenses": Counter(licenses)}


def _card(tmp_path, counts: dict, shards=None, monkeypatch=None) -> tuple[dict, str]:
    cfg = CptCorpusRecipe(inputs=["/src/a", "/src/b/*"])
    shards = [ShardRow(run_id="", path="data/train-00000-of-00001.parquet", rows=counts["kept"], bytes=1,
                       sha256="0")] if shards is None else shards
    path = write_card(tmp_path, cfg, counts, shards, run_id="0123456789abcdef")
    text = path.read_text()
    return yaml.safe_load(text.split("---")[1]), text


@pytest.mark.parametrize(("spdx", "hub"), [
    (["MIT"], ["mit"]),
    (["MIT", "Apache-2.0", "BSD-3-Clause"], ["apache-2.0", "bsd-3-clause", "mit"]),
    (["GPL-3.0-only", "GPL-3.0-or-later", "LGPL-2.1+"], ["gpl-3.0", "lgpl-2.1"]),
    (["MIT", "PSF-2.0"], ["mit", "other"]),  # a license the Hub does not list
    (["unknown"], ["unknown"]),
])
def test_hub_license_ids(spdx, hub):
    assert hub_licenses(spdx) == hub


def test_header_lists_every_license_language_and_size(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01
    header, text = _card(tmp_path, _counts(**{"MIT": 5, "Apache-2.0": 3, "BSD-3-Clause": 2}))
    assert header["license"] == ["apache-2.0", "bsd-3-clause", "mit"]
    assert header["language"] == ["code"]
    assert header["size_categories"] == ["n<1K"]
    assert {"python", "go"} <= set(header["tags"])
    assert "| BSD-3-Clause | bsd-3-clause | 2 |" in text


def test_one_license_is_a_plain_id(tmp_path):
    header, _ = _card(tmp_path, _counts(MIT=4))
    assert header["license"] == "mit"


def test_provenance_and_how_it_was_made(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    _, text = _card(tmp_path, _counts(MIT=4))
    assert f"hash `{recipe_hash(CptCorpusRecipe(inputs=['/src/a', '/src/b/*']))}`" in text
    assert "| inputs | `/src/a`, `/src/b/*` (4 repos) |" in text
    assert f"| datagen | {__version__} |" in text and "| built | 2026-01-01 (UTC) |" in text
    assert "| run | `0123456789abcdef` (table `runs`) |" in text
    how = text.split("## How it was made")[1].split("##")[0]
    assert "1. Crawl: 4 repos, 7 files seen" in how and "near on (MinHash" in how
    assert "4. Shards: 4 kept files (3 dropped) in 1 parquet shard(s)" in how


def test_no_shard_no_card(tmp_path):
    cfg = CptCorpusRecipe()
    assert write_card(tmp_path, cfg, _counts(), []) is None
    assert not (tmp_path / "README.md").exists()


def test_card_parses_with_huggingface_hub(tmp_path):
    hub = pytest.importorskip("huggingface_hub")
    _card(tmp_path, _counts(MIT=2, **{"Apache-2.0": 1}))
    card = hub.DatasetCard.load(tmp_path / "README.md")
    assert card.data.license == ["apache-2.0", "mit"] and card.data.language == ["code"]
    assert card.data.configs[0]["data_files"][0]["split"] == "train"
