"""The learned quality scorer end to end: a corpus built from planted files, a scripted
OpenAI-compatible server (a real HTTP server on 127.0.0.1) rating a per-language sample,
fastText models trained on those labels, and a second corpus build that applies them."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from datagen.builds.cpt_corpus.build import run_cpt_corpus
from datagen.builds.quality_commands import annotate, load_quality_recipe, train
from datagen.cli.app import app
from datagen.errors import UserError
from datagen.score.quality_model import VERSION, load_model, read_meta
from tests.score.quality_plant import plant_repo, planted, scripted_answer
from tests.teachers.fake_server import FakeOpenAI

pytestmark = pytest.mark.slow

PER_KIND = 24  # files of each kind (good, plain, junk) and language
BUILD = ["crawl.licenses=any", "dedup.near.enabled=false", "syntax.enabled=false", "secrets.enabled=false"]


def _sets(base_url: str, cache: Path) -> list[str]:
    small = {"annotate.per_lang": 60, "train.bits": 14, "train.min_labels": 20}
    return [f"teacher.base_url={base_url}", "teacher.model=tiny-teacher", f"teacher.cache_dir={cache}",
            "teacher.backoff_base_s=0"] + [f"{k}={json.dumps(v)}" for k, v in small.items()]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Corpus -> labels (scripted teacher) -> model file, once for the module."""
    root = tmp_path_factory.mktemp("quality")
    repo = plant_repo(root / "planted", seed=1, per_kind=PER_KIND)
    run_cpt_corpus(inputs=[str(repo)], output=root / "corpus", overrides=BUILD)
    with FakeOpenAI(answer=scripted_answer) as server:
        sets = _sets(server.base_url, root / "cache")
        recipe = load_quality_recipe(None, sets)
        counts = annotate(root / "corpus", root / "labels.jsonl", recipe)
        paid = server.total_calls
        again = CliRunner().invoke(app, ["quality", "annotate", str(root / "corpus"), "-o", str(root / "again.jsonl"),
                                         *[a for kv in sets for a in ("--set", kv)]])
        calls_again = server.total_calls - paid
    meta = train(root / "labels.jsonl", root / "quality_v1.zip", recipe)
    return {"root": root, "repo": repo, "recipe": recipe, "counts": counts, "again": again, "paid": paid,
            "calls_again": calls_again, "meta": meta}


def test_annotate_rates_a_per_language_sample_cached_and_accounted(trained):
    root, counts = trained["root"], trained["counts"]
    assert counts["labels"] == {"javascript": 60, "python": 60}  # per_lang of each language's 72 kept files
    assert counts["status"] == {"ok": 120} and trained["paid"] == 120
    rows = [json.loads(line) for line in (root / "labels.jsonl").read_text().splitlines()]
    assert [(r["lang"], r["id"]) for r in rows] == sorted((r["lang"], r["id"]) for r in rows)
    assert {r["score"] for r in rows} == {1, 3, 5}
    # the second run (through the CLI) is answered by the request cache: no call reaches the server
    again = trained["again"]
    assert again.exit_code == 0, again.output
    assert trained["calls_again"] == 0 and "120 from the cache" in again.output and "python 60" in again.output
    assert (root / "again.jsonl").read_bytes() == (root / "labels.jsonl").read_bytes()
    con = duckdb.connect(str(root / "manifest.duckdb"), read_only=True)
    paid = con.execute("SELECT count(*), sum(completion_tokens) FROM teacher_calls WHERE NOT cached").fetchone()
    runs = con.execute("SELECT command, status FROM runs").fetchall()
    assert paid[0] == 120 and paid[1] > 0
    assert runs == [("quality annotate", "finished")]  # the same sample and teacher: the same run


def test_training_writes_a_versioned_model_with_held_out_agreement(trained, tmp_path):
    meta, root = trained["meta"], trained["root"]
    assert read_meta(root / "quality_v1.zip")["version"] == VERSION == meta["version"]
    assert meta["models"] == ["javascript", "python"]  # each has >= min_labels: no pooled model
    assert meta["thresholds"]["python"] == 3.0 and meta["features"]["max_chars"] == 8000
    for lang in ("javascript", "python"):
        ev = meta["held_out"][lang]
        assert ev["n"] > 0 and ev["train"] + ev["n"] == 60
        assert ev["agreement"] >= 0.9, ev
    with zipfile.ZipFile(root / "quality_v1.zip") as zf:
        assert sorted(zf.namelist()) == ["meta.json", "models/javascript.npy", "models/python.npy"]
    # deterministic: the same labels and recipe give the same model file
    train(root / "labels.jsonl", tmp_path / "again.zip", trained["recipe"])
    assert (tmp_path / "again.zip").read_bytes() == (root / "quality_v1.zip").read_bytes()


def test_the_scorer_separates_planted_good_and_junk_files_it_never_saw(trained):
    model = load_model(trained["root"] / "quality_v1.zip")
    fresh = planted(seed=7, per_kind=20)
    scores = model.score([t for *_, t in fresh], [lang for lang, *_ in fresh])
    for lang in ("python", "javascript"):
        good = [s for (la, _, kind, _), s in zip(fresh, scores) if la == lang and kind == "good"]
        junk = [s for (la, _, kind, _), s in zip(fresh, scores) if la == lang and kind == "junk"]
        assert min(good) > max(junk), (lang, good, junk)
        assert min(good) >= 3.0 > max(junk)
    assert model.score(["fn main() {}"], ["rust"]) == [None]  # no model for the language: unscored


def test_the_build_scores_files_and_drops_under_the_cut(trained, tmp_path):
    model = trained["root"] / "quality_v1.zip"
    sets = BUILD + ["quality_model.enabled=true", f"quality_model.path={model}"]
    run_cpt_corpus(inputs=[str(trained["repo"])], output=tmp_path / "out", overrides=sets)
    con = duckdb.connect(str(tmp_path / "out" / "manifest.duckdb"), read_only=True)
    rows = con.execute("SELECT path, decision, reason, quality_score FROM files WHERE lang IS NOT NULL").fetchall()
    junk = [r for r in rows if "/junk_" in r[0]]
    kept = [r for r in rows if "/good_" in r[0] or "/plain_" in r[0]]
    assert junk and all(d == "dropped" and reason.startswith("quality_model") for _, d, reason, _ in junk)
    assert kept and all(d == "kept" and score >= 3.0 for _, d, _, score in kept)
    # a per-language cut in the recipe wins over the model's: junk JavaScript kept
    sets += ["quality_model.lang_thresholds={javascript: 0.0}"]
    run_cpt_corpus(inputs=[str(trained["repo"])], output=tmp_path / "lenient", overrides=sets)
    con = duckdb.connect(str(tmp_path / "lenient" / "manifest.duckdb"), read_only=True)
    js = con.execute("SELECT count(*) FROM files WHERE path LIKE 'javascript/junk_%' AND decision = 'kept'").fetchone()
    assert js[0] == PER_KIND


def test_cli_train_prints_agreement_and_bad_inputs_are_one_line_errors(trained, tmp_path):
    result = CliRunner().invoke(app, ["quality", "train", str(trained["root"] / "labels.jsonl"),
                                      "-o", str(tmp_path / "m.zip"), "--set", "train.bits=14",
                                      "--set", "train.min_labels=20"])
    assert result.exit_code == 0, result.output
    assert "python: trained on" in result.output and "agreement" in result.output
    with pytest.raises(UserError, match="no corpus shards"):
        annotate(tmp_path, tmp_path / "l.jsonl", trained["recipe"])
    with pytest.raises(UserError, match="not a quality model file"):
        read_meta(trained["root"] / "labels.jsonl")


@pytest.mark.parametrize("text", ["abc", "abcd", "abcdefgh", "abcdefghi", "x" * 17, "héllo wörld, déjà vu " * 3])
def test_hashed_ngrams_are_every_byte_4_and_8_gram(text):
    """The strided uint64 views give exactly the n-grams a plain loop over the bytes gives."""
    from datagen.score.quality_model import Features

    feats, raw = Features(bits=20), text.encode()
    mask, shift = 2**64 - 1, 64 - 20
    expected = [((int.from_bytes(raw[i:i + 4], "little") * 0x9E3779B97F4A7C15) & mask) >> shift
                for i in range(len(raw) - 3)]
    expected += [((int.from_bytes(raw[i:i + 8], "little") * 0xC2B2AE3D27D4EB4F) & mask) >> shift
                 for i in range(len(raw) - 7)]
    assert sorted(feats.buckets(text).tolist()) == sorted(expected)
