"""The conventions of typer/click tools, checked over every command of the real CLI tree."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from datagen.cli.app import app


def _commands(cmd=None, path=()):
    """(path, click command) for the root and every group and command under it."""
    cmd = cmd or typer.main.get_command(app)
    yield path, cmd
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = [path for path, _ in _commands()]


def _help(path: tuple[str, ...], flag: str) -> str:
    result = CliRunner().invoke(app, [*path, flag], env={"COLUMNS": "200"})
    assert result.exit_code == 0, (path, result.output)
    return result.stdout


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "datagen")
def test_h_is_help_and_usage_reads_plainly(path):
    text = _help(path, "-h")
    assert text == _help(path, "--help")
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    assert "{" not in usage and "[[" not in usage and "]...]" not in usage, usage
    assert "<bool>" not in text and "<list[" not in text


def test_usage_names_arguments_in_capitals():
    usage = next(line for line in _help(("sql",), "-h").splitlines() if "Usage:" in line)
    assert usage.split() == ["Usage:", "datagen", "sql", "[OPTIONS]", "OUT", "QUERY"]
    usage = next(line for line in _help(("build", "cpt-corpus"), "-h").splitlines() if "Usage:" in line)
    assert usage.split()[-1] == "[PATH]..."


def test_one_meaning_per_short_flag():
    """A short flag stands for the same long option in every command that has it."""
    meaning: dict[str, dict[str, list[str]]] = {}
    for path, cmd in _commands():
        for param in cmd.params:
            longs = [o for o in param.opts if o.startswith("--")]
            for short in (o for o in [*param.opts, *param.secondary_opts] if re.fullmatch(r"-\w", o)):
                meaning.setdefault(short, {}).setdefault(longs[0], []).append(" ".join(path))
    clashes = {s: m for s, m in meaning.items() if len(m) > 1}
    assert not clashes, clashes
    assert meaning["-w"].keys() == {"--workers"} and meaning["-o"].keys() == {"--output"}


def test_quiet_and_verbose_exist_and_exclude_each_other():
    text = _help((), "-h")
    assert "--quiet" in text and "-q" in text and "--verbose" in text and "-v" in text
    result = CliRunner().invoke(app, ["-q", "-v", "runs", "."])
    assert result.exit_code == 2 and "exclude each other" in result.output


def test_rl_pool_takes_input_like_the_other_builds():
    text = _help(("build", "rl-pool"), "-h")
    assert "--input" in text and "--tasks" in text


def _error(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_mistyped_set_key_suggests_the_right_one(tmp_path):
    line = _error("build", "cpt-corpus", "--set", "crawl.max_file_byte=3", "-o", str(tmp_path / "o"))
    assert line == "error: --set: unknown key 'crawl.max_file_byte' (did you mean 'crawl.max_file_bytes'?)"


def test_mistyped_section_suggests_the_section(tmp_path):
    line = _error("build", "cpt-corpus", "--set", "dedupe.exact=false", "-o", str(tmp_path / "o"))
    assert "did you mean 'dedup'" in line


def test_mistyped_key_in_a_recipe_file_names_the_file(tmp_path):
    recipe = tmp_path / "mine.yaml"
    recipe.write_text("name: cpt-corpus\nworkerz: 2\n")
    line = _error("build", "cpt-corpus", "-r", str(recipe))
    assert line.startswith("error: recipe mine.yaml: unknown key 'workerz'") and "'workers'" in line


def test_yaml_error_names_the_recipe_file_and_line(tmp_path):
    recipe = tmp_path / "broken.yaml"
    recipe.write_text("name: cpt-corpus\ncrawl:\n  max_file_bytes: [1, 2\n")
    line = _error("build", "cpt-corpus", "-r", str(recipe))
    assert f"recipe {recipe} is not valid YAML: line " in line and "<unicode string>" not in line


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_an_empty_recipe_is_refused(tmp_path, text):
    recipe = tmp_path / "empty.yaml"
    recipe.write_text(text)
    assert f"recipe {recipe} is empty" in _error("build", "cpt-corpus", "-r", str(recipe))


def test_help_prose_is_reflowed_and_examples_kept():
    from datagen.cli.base import reflow

    text = "First line.\n\n    Crawl repos ->\n    shards.\n\n    Examples:\n\n      datagen a\n      datagen b\n"
    assert reflow(text) == "First line.\n\nCrawl repos -> shards.\n\nExamples:\n\n  datagen a\n  datagen b"
    page = _help(("build", "cpt-corpus"), "-h")
    assert "exact and near dedup -> parquet shards + dataset card -> manifest" in page
    assert 'name = "cpt-corpus"' in page and "\n\n name =" not in page.replace("│", "")
