"""End-to-end tests of `datagen build cpt-corpus` on repos the tests write."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
import yaml

from datagen.builds.cpt_corpus.build import run_cpt_corpus
from tests.conftest import GPL, MIT, git, make_git_repo, write_tree


def build(inputs, out, **kw):
    return run_cpt_corpus(inputs=[str(p) for p in inputs], output=out, **kw)


def files_table(out: Path) -> dict[tuple[str, str], dict]:
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    cur = con.execute("SELECT * FROM files")
    cols = [d[0] for d in cur.description]
    rows = {(r[cols.index("repo")], r[cols.index("path")]): dict(zip(cols, r)) for r in cur.fetchall()}
    con.close()
    return rows


def shard_digest(out: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((out / "data").glob("*.parquet"))}


@pytest.mark.slow
def test_every_file_lands_in_the_manifest_with_its_reason(two_repos, tmp_path):
    a, b = two_repos
    out = tmp_path / "out"
    res = build([a, b], out)
    rows = files_table(out)
    expected_reasons = {
        ("alpha", "alpha/core.py"): None,
        ("alpha", "alpha/util.py"): None,  # first copy by (repo, path) is kept
        ("beta", "tools/util.py"): "exact_duplicate",
        ("alpha", "node_modules/dep/index.js"): "vendored",
        ("alpha", "gen/model_pb2.py"): "generated",
        ("alpha", "logo.png"): "binary",
        ("alpha", "build/out.py"): "gitignored",
        ("alpha", "debug.log"): "gitignored",
        ("alpha", "Makefile"): "unknown_lang",
        ("beta", "app.min.js"): "minified",
        ("beta", "src/math.js"): None,
    }
    for key, reason in expected_reasons.items():
        assert key in rows, key
        assert rows[key]["reason"] == reason, (key, rows[key]["reason"])
        assert rows[key]["decision"] == ("kept" if reason is None else "dropped")
    dup = rows[("beta", "tools/util.py")]
    assert dup["duplicate_of"] == rows[("alpha", "alpha/util.py")]["file_id"]
    # every file on disk (outside .git) is in the table
    on_disk = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    assert on_disk == {path for (repo, path) in rows if repo == "alpha"}
    assert {r["license"] for r in rows.values()} == {"MIT"}
    assert res.kept == sum(1 for r in rows.values() if r["decision"] == "kept")
    # kept rows point at a shard, dropped rows do not
    for r in rows.values():
        assert (r["shard"] is not None) == (r["decision"] == "kept")


def test_shards_load_with_datasets_and_card_header(two_repos, tmp_path):
    import datasets

    out = tmp_path / "out"
    build(two_repos, out)
    ds = datasets.load_dataset("parquet", data_dir=str(out / "data"), split="train")
    assert {"id", "repo", "path", "lang", "license", "text"} <= set(ds.column_names)
    assert ("alpha", "alpha/core.py") in set(zip(ds["repo"], ds["path"]))
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    kept = con.execute("SELECT count(*) FROM files WHERE decision='kept'").fetchall()[0][0]
    shard_rows = con.execute("SELECT sum(rows) FROM shards").fetchall()[0][0]
    run = con.execute("SELECT status, recipe_hash FROM runs").fetchall()
    con.close()
    assert len(ds) == kept == shard_rows
    assert run[0][0] == "finished" and len(run[0][1]) == 16
    card = (out / "README.md").read_text()
    header = yaml.safe_load(card.split("---")[1])
    assert header["license"] == "mit"
    assert header["configs"][0]["config_name"] == "default"
    assert header["configs"][0]["data_files"][0]["split"] == "train"
    names = [p.name for p in (out / "data").iterdir()]
    assert names == ["train-00000-of-00001.parquet"]


def test_shards_are_size_capped_and_named_of_n(tmp_path):
    files = {"LICENSE": MIT}
    for i in range(30):
        files[f"pkg/mod_{i:02d}.py"] = "".join(f"def f_{i}_{j}(x):\n    return x * {j}\n\n" for j in range(40))
    repo = write_tree(tmp_path / "big", files)
    out = tmp_path / "out"
    build([repo], out, overrides=["shards.max_bytes=4000", "shards.row_group_rows=3"])
    shards = sorted((out / "data").glob("*.parquet"))
    assert len(shards) > 3
    n = len(shards)
    assert [p.name for p in shards] == [f"train-{i:05d}-of-{n:05d}.parquet" for i in range(n)]
    total = sum(pq.read_metadata(p).num_rows for p in shards)
    assert total == 30


def test_git_repo_reads_head_not_working_tree_and_bare_repo(tmp_path):
    repo = make_git_repo(tmp_path / "g", {"LICENSE": MIT, "a.py": "x = 1\n", "b.py": "y = 2\n"})
    (repo / "a.py").write_text("x = 'edited in the working tree'\n")
    (repo / "untracked.py").write_text("z = 3\n")
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    out = tmp_path / "out"
    build([repo, bare], out)
    rows = files_table(out)
    assert ("g", "untracked.py") not in rows
    assert ("mirror", "a.py") in rows  # bare repo named without .git
    texts = {(r["repo"], r["path"]): r["text"] for r in pq.read_table(out / "data").to_pylist()}
    assert texts[("g", "a.py")] == "x = 1\n"
    assert rows[("mirror", "a.py")]["reason"] == "exact_duplicate"


@pytest.mark.slow
def test_license_allow_list_drops_gpl_repo(tmp_path):
    gpl = write_tree(tmp_path / "copyleft", {"COPYING": GPL, "main.py": "print('hi')\n"})
    mit = write_tree(tmp_path / "free", {"LICENSE": MIT, "main.py": "print('hello')\n"})
    out = tmp_path / "out"
    build([gpl, mit], out)
    rows = files_table(out)
    assert rows[("copyleft", "main.py")]["reason"] == "license"
    assert rows[("copyleft", "main.py")]["license"] == "GPL-3.0"
    assert rows[("free", "main.py")]["decision"] == "kept"
    out2 = tmp_path / "out2"
    build([gpl, mit], out2, overrides=["crawl.licenses=any"])
    assert files_table(out2)[("copyleft", "main.py")]["decision"] == "kept"


def test_bad_inputs_never_crash_and_are_recorded(tmp_path):
    root = write_tree(tmp_path / "messy", {
        "LICENSE": MIT,
        "ok.py": "print('fine')\n",
        "latin1.py": "s = 'caf\xe9'\n".encode("latin-1"),
        "nul.py": b"x = 1\x00\n",
        "huge.py": "",
        "longline.py": "x = '" + "a" * 100_000 + "'\n",
        "empty.py": "",
    })
    with open(root / "huge.py", "wb") as fh:  # 50 MB, sparse
        fh.truncate(50 * 1024 * 1024)
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    os.symlink(".", root / "self_dir")
    os.mkfifo(root / "pipe.py")
    broken = tmp_path / "broken"
    (broken / ".git").mkdir(parents=True)
    (broken / ".git" / "HEAD").write_text("garbage\n")
    empty = tmp_path / "emptyrepo"
    empty.mkdir()
    git(empty, "init", "-q")
    out = tmp_path / "out"
    build([root, broken, empty], out)
    rows = files_table(out)
    reasons = {path: r["reason"] for (repo, path), r in rows.items() if repo == "messy"}
    assert reasons["ok.py"] is None
    assert reasons["latin1.py"] == "invalid_utf8"
    assert reasons["nul.py"] == "binary"
    assert reasons["huge.py"] == "too_large"
    assert reasons["longline.py"] == "max_line_length"
    assert reasons["empty.py"] == "empty"
    assert reasons["loop_a"] == reasons["loop_b"] == reasons["self_dir"] == "symlink"
    assert reasons["pipe.py"] == "not_regular_file"
    assert rows[("broken", ".")]["reason"].startswith("broken_repo: ")
    assert rows[("emptyrepo", ".")]["reason"] == "empty_repo"


def test_file_vanishing_between_listing_and_reading_is_recorded(tmp_path):
    from datagen.config.cpt import CrawlConfig
    from datagen.crawl.reader import RepoFileReader

    repo = write_tree(tmp_path / "r", {"a.py": "x = 1\n"})
    import pyarrow as pa

    from datagen.builds.cpt_corpus.build import LISTING_SCHEMA

    listing = tmp_path / "listing.parquet"
    row = {"repo": "r", "path": "gone.py", "size": 5, "skip": None, "lang": "python", "git_oid": None,
           "license": None, "source": str(repo), "root": str(repo), "kind": "dir"}
    pq.write_table(pa.Table.from_pylist([row], schema=LISTING_SCHEMA), listing)
    docs = list(RepoFileReader(str(listing), 10, CrawlConfig()).run())
    assert docs[0].metadata["decision"] == "dropped"
    assert docs[0].metadata["reason"].startswith("unreadable")


def test_missing_input_is_a_clear_error_before_any_work(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "datagen.cli.app", "build", "cpt-corpus", "--input", str(tmp_path / "nope"),
         "--output", str(out)], capture_output=True, text=True,
    )
    assert proc.returncode == 2
    assert "input not found" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


@pytest.mark.slow
def test_deterministic_across_runs_and_worker_counts(two_repos, tmp_path):
    a, b = two_repos
    build([a, b], tmp_path / "o1", workers=1, overrides=["crawl.files_per_task=3"])
    build([a, b], tmp_path / "o2", workers=2, overrides=["crawl.files_per_task=3"])
    d1, d2 = shard_digest(tmp_path / "o1"), shard_digest(tmp_path / "o2")
    assert d1 and d1 == d2
    strip = lambda t: {k: {c: v for c, v in r.items() if c != "run_id"} for k, r in t.items()}  # noqa: E731
    assert strip(files_table(tmp_path / "o1")) == strip(files_table(tmp_path / "o2"))


@pytest.mark.slow
def test_finished_build_rerun_is_a_noop(two_repos, tmp_path):
    out = tmp_path / "out"
    first = build(two_repos, out)
    before = shard_digest(out)
    again = build(two_repos, out)
    assert again.skipped and again.run_id == first.run_id
    assert shard_digest(out) == before
    changed = build(two_repos, out, overrides=["quality.enabled=false"])
    assert not changed.skipped and changed.run_id != first.run_id


def _corpus(tmp_path: Path, repos: int = 6, files: int = 60) -> list[Path]:
    roots = []
    for r in range(repos):
        tree = {"LICENSE": MIT}
        for i in range(files):
            tree[f"pkg/m{i:03d}.py"] = f"# repo {r} module {i}\n" + "".join(
                f"def fn_{r}_{i}_{j}(value):\n    return value + {j}\n\n" for j in range(30))
        roots.append(write_tree(tmp_path / "corpus" / f"repo{r}", tree))
    return roots


@pytest.mark.slow
def test_sigkill_then_rerun_gives_the_same_output(tmp_path):
    roots = _corpus(tmp_path)  # 6 x 60 files + licenses -> 37 crawl tasks of 10 files
    ref = tmp_path / "ref"
    build(roots, ref, overrides=["crawl.files_per_task=10"])
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "datagen.cli.app", "build", "cpt-corpus", *map(str, roots), "-o", str(out),
           "--set", "crawl.files_per_task=10"]
    env = {**os.environ, "DATAGEN_NO_PROGRESS": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    work = out / ".work"
    while time.monotonic() < deadline:  # wait until some (not all) crawl ranks are done
        done = list(work.glob("*/logs/crawl/completions/*")) if work.exists() else []
        if len(done) >= 3:
            break
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)  # the build process alone, as `kill -9 PID` does
    proc.wait()
    assert 3 <= len(done) < 36, "the kill must land mid-crawl"
    # nothing of the killed build lingers (datatrove's manager process dies with it)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("processes of the killed build were still running 15 s later")
    assert not (out / "data").exists()
    rerun = subprocess.run(cmd, env={**os.environ, "DATAGEN_NO_PROGRESS": "1"}, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert shard_digest(out) == shard_digest(ref)
    count = lambda o: duckdb.connect(str(o / "manifest.duckdb"), read_only=True).execute(  # noqa: E731
        "SELECT decision, count(*) FROM files GROUP BY 1 ORDER BY 1").fetchall()
    assert count(out) == count(ref)
    assert not (out / ".work").exists()


def test_recipe_errors_name_the_key(tmp_path, two_repos):
    from datagen.errors import UserError

    with pytest.raises(UserError, match="unknown key 'crawl.nope'"):
        build(two_repos, tmp_path / "o", overrides=["crawl.nope=1"])
    with pytest.raises(UserError, match="bad value for 'crawl.max_file_bytes'"):
        build(two_repos, tmp_path / "o", overrides=["crawl.max_file_bytes=-5"])


def test_git_repo_with_missing_objects_is_broken_not_empty(tmp_path):
    import shutil

    repo = make_git_repo(tmp_path / "r", {"LICENSE": MIT, "a.py": "x = 1\n"})
    objects = repo / ".git" / "objects"
    for child in objects.iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    out = tmp_path / "out"
    build([repo], out, allow_empty=True)  # its one repo is broken: nothing to keep
    row = files_table(out)[("r", ".")]
    assert row["reason"].startswith("broken_repo")


def test_git_repo_missing_one_blob_of_head_is_a_broken_repo_with_the_path(tmp_path):
    """A copy of a repo without one of its files' objects (a partial mirror) is a recorded
    skip naming the file, not a crash on ``git ls-tree``'s ``BAD`` size."""
    import subprocess

    repo = make_git_repo(tmp_path / "r", {"LICENSE": MIT, "a.py": "x = 1\n", "big/huge.yaml": "k: v\n"})
    oid = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD:big/huge.yaml"],
                         capture_output=True, text=True, check=True).stdout.strip()
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    out = tmp_path / "out"
    build([repo], out, allow_empty=True)
    reason = files_table(out)[("r", ".")]["reason"]
    assert reason.startswith("broken_repo: 1 file(s) of HEAD missing") and "big/huge.yaml" in reason


def test_tool_cache_folders_are_listed_not_lost(tmp_path):
    repo = write_tree(tmp_path / "r", {
        "LICENSE": MIT, "a.py": "x = 1\n", "__pycache__/a.cpython-311.pyc": b"\x00\x01",
        ".vscode/settings.json": "{}\n",
    })
    out = tmp_path / "out"
    build([repo], out)
    rows = files_table(out)
    assert rows[("r", "__pycache__/a.cpython-311.pyc")]["reason"] == "skipped_dir"
    assert rows[("r", ".vscode/settings.json")]["reason"] == "skipped_dir"


def test_bad_workers_flag_is_a_user_error(tmp_path, two_repos):
    from datagen.errors import UserError

    with pytest.raises(UserError, match="bad value for 'workers'"):
        build(two_repos, tmp_path / "o", workers=0)


@pytest.mark.slow
def test_rerun_after_another_build_in_the_same_folder_rebuilds(tmp_path, two_repos):
    a, b = two_repos
    out = tmp_path / "out"
    first = build([a, b], out)
    build([a], out)
    again = build([a, b], out)
    assert not again.skipped and again.run_id == first.run_id
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    assert con.execute("SELECT DISTINCT run_id FROM files").fetchall() == [(first.run_id,)]
    assert con.execute("SELECT count(DISTINCT repo) FROM files").fetchall() == [(2,)]
    con.close()


def test_repo_names_stay_unique(tmp_path):
    from datagen.crawl.sources import discover

    for d in ("a/foo", "b/foo", "c/foo-2"):
        write_tree(tmp_path / d, {"x.py": "x = 1\n"})
    names = [r.name for r in discover([str(tmp_path / d) for d in ("a/foo", "b/foo", "c/foo-2")], {})]
    assert len(set(names)) == 3 and names[0] == "foo"


def test_streamed_listing_is_the_sorted_listing_of_every_file(tmp_path):
    """Stage 1 lists repo by repo, never holding the corpus: its parquet, totals and run
    fingerprint are those of every file sorted by (repo, path) in one list."""
    from rich.console import Console

    from datagen.builds.cpt_corpus.build import _fingerprint, _list, load_cpt_recipe
    from datagen.crawl.rules import CrawlRules
    from datagen.crawl.sources import discover, fingerprint, list_repo
    from datagen.runtime.progress import Stopwatch

    inputs = [
        write_tree(tmp_path / "in" / "zeta", {"a.py": "a = 1\n", "a/b/c.py": "c = 1\n", "a.b.py": "ab = 1\n",
                                              "node_modules/x/i.js": "i = 1;\n", "logo.png": b"\x89PNG",
                                              "caf\udce9.py": "e = 1\n"}),
        make_git_repo(tmp_path / "in" / "beta", {"LICENSE": MIT, "z.py": "z = 1\n", "d/e.py": "e = 1\n",
                                                 "d.py": "d = 1\n", ".gitignore": "*.log\n"}),
        write_tree(tmp_path / "other" / "beta", {"LICENSE": MIT, "x.py": "x = 1\n", "skip.log": "l\n",
                                                 ".gitignore": "*.log\n"}),  # named beta-2
    ]
    cfg = load_cpt_recipe(None, ["crawl.files_per_task=4"], inputs=[str(p) for p in inputs],
                          output=str(tmp_path / "out"))
    listing = _list(cfg, Console(quiet=True), Stopwatch(), tmp_path / "listing.parquet")

    rules = CrawlRules.from_config(cfg.crawl)
    repos = discover(cfg.inputs, cfg.crawl.repo_names)
    every = sorted(((r, lf) for r in repos for lf in list_repo(r, rules)), key=lambda x: (x[1].repo, x[1].path))
    written = pq.ParquetFile(tmp_path / "listing.parquet")
    rows = written.read().to_pylist()
    assert [(r["repo"], r["path"]) for r in rows] == [
        (lf.repo, lf.path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
        for _, lf in every]
    assert [(r["size"], r["skip"], r["git_oid"], r["license"]) for r in rows] == [
        (lf.size, lf.skip, lf.git_oid, r.license) for r, lf in every]
    assert {r["repo"] for r in rows} == {"zeta", "beta", "beta-2"}
    assert {"gitignored", "vendored", "binary"} <= {r["skip"] for r in rows}
    assert [written.metadata.row_group(i).num_rows for i in range(written.num_row_groups)] == [4] * (
        len(rows) // 4) + ([len(rows) % 4] if len(rows) % 4 else [])
    assert listing.files == len(every)
    assert listing.needed_bytes == sum(lf.size for _, lf in every if lf.skip is None) > 0
    assert _fingerprint(cfg, listing) == fingerprint(repos, [lf for _, lf in every])


def test_listing_leaves_no_temp_file(two_repos, tmp_path):
    """The listing is written before the run id is known, into a temp file under .work:
    moved into the run's work folder or removed, and a killed build's is cleaned up."""
    import socket

    out = tmp_path / "out"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    killed = out / ".work" / f"listing-{socket.gethostname()}-{dead}-0123abcd.parquet.tmp"
    write_tree(out / ".work", {killed.name: "half a listing"})
    build(two_repos, out)
    assert not (out / ".work").exists()
    again = build(two_repos, out)
    assert again.skipped
    assert not (out / ".work").exists()
