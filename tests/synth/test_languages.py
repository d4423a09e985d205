"""Source files, test files and history mining in every language (real git, no toolchain)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from datagen.synth.entities import extract_entities
from datagen.synth.mining import history_candidates
from datagen.synth.snapshot import is_test_file, source_files
from datagen.synth.strategies.registry import get_strategy

# (path, is test code) by each ecosystem's convention
TEST_FILES = [
    ("kv/store.go", False), ("kv/store_test.go", True), ("kv/testdata/in.go", True),
    ("src/lib.rs", False), ("tests/ring.rs", True), ("benches/speed.rs", False),  # a benchmark (no target either)
    ("src/main/java/a/Calc.java", False), ("src/test/java/a/CalcTest.java", True), ("a/CalcTest.java", True),
    ("lib/calc.rb", False), ("spec/calc_spec.rb", True), ("test/calc_test.rb", True), ("lib/calc_spec.rb", True),
    ("src/Calc.php", False), ("tests/CalcTest.php", True), ("src/CalcTest.php", True),
    ("src/calc.c", False), ("tests/test_calc.c", True), ("test/calc.cpp", True), ("src/calc_test.cc", True),
    ("src/spec/helper.py", True),  # a test folder of one ecosystem is one in all (``sandbox.protect``)
]


@pytest.mark.parametrize(("path", "expected"), TEST_FILES)
def test_test_file_conventions(path: str, expected: bool) -> None:
    assert is_test_file(path) is expected


def test_source_files_take_every_language() -> None:
    paths = ["kv/store.go", "kv/store_test.go", "src/lib.rs", "tests/ring.rs", "benches/speed.rs", "src/Calc.php",
             "lib/calc.rb",
             "src/calc.c", "include/calc.h", "src/calc.cpp", "src/main/java/Calc.java", "web/app.ts",
             "web/types.d.ts", "README.md", "scripts/build.sh"]
    langs = {"kv/store.go": "go", "kv/store_test.go": "go", "src/lib.rs": "rust", "tests/ring.rs": "rust",
             "benches/speed.rs": "rust",
             "src/Calc.php": "php", "lib/calc.rb": "ruby", "src/calc.c": "c", "include/calc.h": "c",
             "src/calc.cpp": "cpp", "src/main/java/Calc.java": "java", "web/app.ts": "typescript",
             "web/types.d.ts": "typescript", "README.md": "markdown", "scripts/build.sh": "shell"}
    assert source_files(paths, langs) == [
        ("kv/store.go", "go"), ("src/lib.rs", "rust"), ("src/Calc.php", "php"), ("lib/calc.rb", "ruby"),
        ("src/calc.c", "c"), ("include/calc.h", "c"), ("src/calc.cpp", "cpp"),
        ("src/main/java/Calc.java", "java"), ("web/app.ts", "typescript")]


def git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def commit(root: Path, files: dict[str, str], message: str) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def mine(root: Path, source: set[str]) -> list:
    texts = {p: (root / p).read_text() for p in git(root, "ls-files").split()}
    return history_candidates("r", str(root), texts, source, max_commits=10)


GO_V1 = "package kv\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"
GO_V2 = "package kv\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
GO_TEST = ("package kv\n\nimport \"testing\"\n\n"
           "func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal()\n\t}\n}\n")


# a source file and a test file in each ecosystem's layout
LAYOUTS = [("kv/add.go", "kv/add_test.go"), ("src/lib.rs", "tests/add.rs"),
           ("src/main/java/a/Add.java", "src/test/java/a/AddTest.java"), ("lib/add.rb", "spec/add_spec.rb"),
           ("src/Add.php", "tests/AddTest.php"), ("src/add.c", "tests/test_add.c"), ("src/add.cpp", "test/add.cpp")]


@pytest.mark.parametrize(("source", "test"), LAYOUTS)
def test_history_mines_commits_with_a_test_file(tmp_path: Path, source: str, test: str) -> None:
    git(tmp_path, "init", "-q")
    commit(tmp_path, {source: GO_V1}, "add")
    commit(tmp_path, {source: GO_V2, test: GO_TEST}, "fix Add, with a test")
    commit(tmp_path, {source: GO_V2 + "\n// Sub is next.\n"}, "comment only, no test")
    [found] = mine(tmp_path, {source})
    assert found.changes == {source: GO_V1 + "\n// Sub is next.\n"}


RS_V1 = "pub fn add(a: u8, b: u8) -> u8 {\n    a - b\n}\n"
RS_V2 = "pub fn add(a: u8, b: u8) -> u8 {\n    a + b\n}\n"
RS_TESTS = ("#[cfg(test)]\nmod tests {\n    #[test]\n"
            "    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n}\n")


def test_history_keeps_rust_inline_tests_out_of_the_revert(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    commit(tmp_path, {"src/lib.rs": RS_V1}, "add")
    commit(tmp_path, {"src/lib.rs": RS_V2 + "\n" + RS_TESTS}, "fix add, with an inline test")
    commit(tmp_path, {"src/lib.rs": RS_V2 + "\n" + RS_TESTS.replace("(1, 2), 3", "(2, 2), 4")}, "tests only")
    [found] = mine(tmp_path, {"src/lib.rs"})
    # the fix is reverted, the snapshot's (latest) inline tests stay; the tests-only commit is no task
    assert found.changes == {"src/lib.rs": RS_V1 + "\n" + RS_TESTS.replace("(1, 2), 3", "(2, 2), 4")}


def test_remove_function_declines_what_another_source_file_names() -> None:
    lib = "package kv\n\nfunc helper() int {\n\treturn 1\n}\n\nfunc Use() int {\n\treturn 2\n}\n"
    files = {"kv/lib.go": lib, "kv/other.go": "package kv\n\nvar x = helper()\n",
             "kv/lib_test.go": "package kv\n\nvar y = Use()\n"}
    entities = {e.name: e for e in extract_entities("kv/lib.go", lib, "go")}
    strategy = get_strategy("remove_function_v1")
    assert strategy.transform_repo(files, entities["helper"], random.Random(0)) is None
    # a test file naming it is what fails after the removal
    assert strategy.transform_repo(files, entities["Use"], random.Random(0)) == {
        "kv/lib.go": "package kv\n\nfunc helper() int {\n\treturn 1\n}\n"}


def test_history_takes_at_most_half_the_singles_budget(tmp_path: Path) -> None:
    """Real past fixes are single bugs: with a budget of 4, the two newest commits are
    proposed, and procedural bugs fill the rest (no more than 4 in all)."""
    from rich.console import Console

    from datagen.builds.tasks.stages import RepoState, propose_all
    from datagen.config.tasks import TasksRecipe
    from datagen.crawl.sources import Repo
    from datagen.records.tasks import RepoBaselineRow
    from datagen.synth.baseline import Baseline

    src = "kv/add.go"
    body = "package kv\n\nfunc Add(a, b int) int {\n\treturn a %s b\n}\n\nfunc Twice(a int) int {\n\treturn a * 2\n}\n"
    git(tmp_path, "init", "-q")
    commit(tmp_path, {src: body % "-"}, "add")
    for n, op in enumerate(["*", "/", "%", "+", "^", "+"]):
        test = GO_TEST.replace("TestAdd", f"TestAdd{n}")
        commit(tmp_path, {src: body % op, f"kv/add{n}_test.go": test}, f"fix {n}")
    texts = {p: (tmp_path / p).read_text() for p in git(tmp_path, "ls-files").split()}
    cfg = TasksRecipe.model_validate({"synth": {"families": ["procedural", "history"],
                                                "max_candidates_per_repo": 4}})
    repo = Repo("kv", str(tmp_path), str(tmp_path), "git")
    state = RepoState(repo, RepoBaselineRow(run_id="r", repo="kv", runner="go", status="ok"), texts=texts,
                      sources=[(src, "go")], baseline=Baseline("go", stable=["kv::TestAdd0"]))
    out = propose_all(cfg, [state], None, Console(quiet=True))
    families = [c.family for c in out]
    assert len(out) == 4 and families.count("history") == 2 and families.count("procedural") == 2
    # the newest fixes are the ones taken
    assert [c.entity for c in out if c.family == "history"] == [c.entity for c in mine(tmp_path, {src})[:2]]
