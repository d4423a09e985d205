"""``datagen report``: charts and tables from a real build's manifest, through the CLI."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from datagen.builds.cpt_corpus.build import run_cpt_corpus
from datagen.manifest import Manifest
from datagen.records import RunRow, TeacherCall
from tests.conftest import MIT, UTIL_PY, write_tree

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHART_TITLES = {
    "files_by_outcome": "Files kept and dropped, by reason",
    "kept_bytes_by_lang": "Kept bytes by language",
    "cluster_sizes": "Near-duplicate cluster sizes",
    "syntax_error_ratio": "Syntax error ratio by language",
    "token_counts": "Tokens per repository and language",
    "teacher_calls": "Teacher calls by status",
}


def report(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run([sys.executable, "-m", "datagen.cli.app", "report", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def tiny_tokenizer(folder: Path) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>", "<repo_name>", "<file_sep>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator([UTIL_PY, "function add(a, b) { return a + b; }\n"] * 20, trainer)
    folder.mkdir(parents=True)
    tok.save(str(folder / "tokenizer.json"))
    return folder / "tokenizer.json"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A packed cpt-corpus build: kept and dropped files, a near-duplicate cluster, a syntax error."""
    tmp = tmp_path_factory.mktemp("report")
    a = write_tree(tmp / "src" / "alpha", {
        "LICENSE": MIT, "alpha/util.py": UTIL_PY, "alpha/bad.py": "def f(:\n    pass\n",
        "alpha/core.py": "import os\n\n\ndef run(path):\n    return os.path.exists(path)\n",
        "app.min.js": "var a=1;" * 10 + "\n", "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
    })
    b = write_tree(tmp / "src" / "beta", {
        "LICENSE": MIT, "tools/util.py": UTIL_PY.replace("Lowercase", "Lower-case"),
        "tools/same.py": UTIL_PY, "src/math.js": "function add(a, b) {\n  return a + b;\n}\n",
    })
    tok = tiny_tokenizer(tmp / "tok")
    out = tmp / "out"
    run_cpt_corpus(inputs=[str(a), str(b)], output=out,
                   overrides=[f"pack.tokenizer={tok}", "pack.seq_lens=[64]", "workers=1"])
    return out


def sql(out: Path, statement: str) -> list[tuple]:
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        return con.execute(statement).fetchall()
    finally:
        con.close()


def md_table(page: str, title: str) -> list[list[str]]:
    """The rows (header excluded) of the first table after ``## title``."""
    section = page.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split(" | ")] for ln in lines[2:]]


def check_png(path: Path) -> tuple[int, int]:
    from PIL import Image

    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    with Image.open(path) as im:
        im.load()  # decodes every pixel: a truncated file fails here
        assert im.width == 900 and 150 < im.height <= 1400
        return im.size


@pytest.mark.slow
def test_report_charts_and_numbers_match_the_manifest(built):
    res = report(str(built))
    assert res.returncode == 0, res.stderr
    folder = built / "report"
    page = (folder / "index.md").read_text()
    for key in ("files_by_outcome", "kept_bytes_by_lang", "cluster_sizes", "syntax_error_ratio", "token_counts"):
        check_png(folder / f"{key}.png")
        assert f"![{CHART_TITLES[key]}]({key}.png)" in page
        assert f"wrote {folder / f'{key}.png'}" in res.stdout

    outcomes = {r[0]: int(r[2]) for r in md_table(page, CHART_TITLES["files_by_outcome"])}
    expected = dict(sql(built, "SELECT coalesce(reason, 'kept'), count(*) FROM files GROUP BY 1"))
    assert outcomes == expected
    assert {"kept", "syntax_errors", "near_duplicate", "exact_duplicate", "binary"} <= outcomes.keys()

    langs = {r[0]: (int(r[1]), int(r[2])) for r in md_table(page, CHART_TITLES["kept_bytes_by_lang"])}
    assert langs == {lang: (n, b) for lang, n, b in sql(
        built, "SELECT lang, count(*), sum(bytes) FROM files WHERE decision = 'kept' GROUP BY lang")}

    sizes = {int(r[0]): int(r[1]) for r in md_table(page, CHART_TITLES["cluster_sizes"])}
    assert sizes == dict(sql(built, "SELECT size, count(*) FROM clusters GROUP BY size")) and sizes

    ratio = {r[0]: [int(x) for x in r[1:]] for r in md_table(page, CHART_TITLES["syntax_error_ratio"])}
    (py_files, py_zero, py_over) = sql(built, "SELECT count(*), count(*) FILTER (syntax_error_ratio = 0), "
                                       "count(*) FILTER (syntax_error_ratio > 0.05) FROM files "
                                       "WHERE lang = 'python' AND syntax_error_ratio IS NOT NULL")[0]
    assert ratio["python"][0] == py_files == sum(ratio["python"][1:]) and ratio["python"][1] == py_zero
    assert sum(ratio["python"][4:]) == py_over >= 1  # bad.py

    tokens: dict[str, int] = {}
    for repo, _lang, _files, n in md_table(page, CHART_TITLES["token_counts"]):
        tokens[repo] = tokens.get(repo, 0) + int(n)
    assert tokens == dict(sql(built, "SELECT repo, sum(tokens) FROM token_counts GROUP BY repo"))

    (run_id, recipe_hash) = sql(built, "SELECT run_id, recipe_hash FROM runs")[0]
    assert md_table(page, "Runs")[0][:3] == [run_id, "build cpt-corpus", recipe_hash]
    # this build made no teacher calls: that chart is skipped, and says so
    assert "- Teacher calls by status: skipped, `teacher_calls` has no rows." in page
    assert "skipped teacher_calls" in res.stdout and not (folder / "teacher_calls.png").exists()


@pytest.mark.slow
def test_report_is_deterministic(built, tmp_path):
    first, second, third = tmp_path / "one", tmp_path / "two", tmp_path / "three"
    assert report(str(built), "--dest", str(first)).returncode == 0
    assert report(str(built / "manifest.duckdb"), "-d", str(second)).returncode == 0
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir()) and {"index.md", "report.html"} <= set(names)
    assert len(names) == 11  # 9 charts drawn (licenses, file and document sizes, long buckets too), page, index.md
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    # the build's only run: --run-id selects the same rows, so the same pictures
    (run_id,) = sql(built, "SELECT run_id FROM runs")[0]
    assert report(str(built), "-d", str(third), "--run-id", run_id).returncode == 0
    for name in names:
        if name.endswith(".png"):
            assert (first / name).read_bytes() == (third / name).read_bytes(), name
    assert f"`teacher_calls` has no rows for run {run_id}" in (third / "index.md").read_text()


@pytest.mark.slow
def test_teacher_only_manifest_skips_file_charts(tmp_path):
    out = tmp_path / "teach"
    now = dt.datetime(2026, 1, 1, 12, 0)
    calls = [TeacherCall(run_id="r1", request_hash=f"h{i}", model="m", model_id="m", backend="openai", n=1,
                         prompt_tokens=0 if i % 3 == 0 else 10, completion_tokens=5, latency_s=0.1,
                         attempts=1, status=status, cached=i % 3 == 0, created_at=now)
             for i, status in enumerate(["ok", "ok", "ok", "ok", "invalid", "error", "truncated"])]
    with Manifest(out, tables=[RunRow, TeacherCall]) as db:  # what `datagen teacher run` creates
        db.insert(TeacherCall, calls)
    stale = out / "report" / "files_by_outcome.png"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(PNG_MAGIC)
    res = report(str(out))
    assert res.returncode == 0, res.stderr
    page = (out / "report" / "index.md").read_text()
    assert "- Files kept and dropped, by reason: skipped, the manifest has no `files` table." in page
    assert "- Tokens per repository and language: skipped, the manifest has no `token_counts` table." in page
    assert "_No `runs` rows in this manifest._" in page
    check_png(out / "report" / "teacher_calls.png")
    assert not stale.exists()  # a skipped chart leaves no old picture behind
    rows = {r[0]: (int(r[1]), int(r[2]), int(r[3])) for r in md_table(page, CHART_TITLES["teacher_calls"])}
    assert rows == {s: (n, c, p) for s, n, c, p in sql(
        out, "SELECT status, count(*), count(*) FILTER (cached), sum(prompt_tokens) FROM teacher_calls "
        "GROUP BY status")}


@pytest.mark.slow
def test_errors_exit_2(tmp_path, built):
    res = report(str(tmp_path / "nothing"))
    assert res.returncode == 2 and "no manifest at" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "nothing").exists()
    res = report(str(built), "--run-id", "nope", "--dest", str(tmp_path / "r"))
    assert res.returncode == 2 and "run 'nope' is not in" in res.stderr
