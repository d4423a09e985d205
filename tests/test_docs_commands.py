"""Every `datagen ...` command in README.md and docs/ exists, with the flags it is given,
and every `--set KEY=...` names a key of that command's recipe.

Read from the code blocks of the documents (lines joined at a trailing backslash) and
from inline code that starts with ``datagen ``; checked against the real click tree and
the recipe models, so a renamed flag or key fails here before a reader finds it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

from datagen.cli.app import app
from datagen.config.all import AllRecipe, route_overrides
from datagen.config.base import load_recipe, recipe_keys
from datagen.config.cpt import CptCorpusRecipe
from datagen.config.quality import QualityRecipe
from datagen.config.rl_pool import RlPoolRecipe
from datagen.config.sandbox import ValidateRecipe
from datagen.config.tasks import TasksRecipe
from datagen.config.teacher import TeacherRecipe

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # docs/reports/ too
RECIPES = {("build", "cpt-corpus"): CptCorpusRecipe, ("build", "tasks"): TasksRecipe,
           ("build", "rl-pool"): RlPoolRecipe, ("build", "all"): AllRecipe, ("validate",): ValidateRecipe,
           ("sandbox", "run"): ValidateRecipe, ("serve", "grader"): ValidateRecipe,
           ("quality", "annotate"): QualityRecipe, ("quality", "train"): QualityRecipe,
           ("env", "plan"): TasksRecipe, ("env", "build"): TasksRecipe, ("env", "dockerfile"): TasksRecipe,
           ("teacher", "ping"): TeacherRecipe, ("teacher", "run"): TeacherRecipe}
STAGE_MODELS = {"cpt_corpus": CptCorpusRecipe, "tasks": TasksRecipe, "rl_pool": RlPoolRecipe}


def _command_lines(text: str) -> list[str]:
    """`datagen ...` command lines: in fenced code blocks, and inline `datagen ...` code."""
    found, in_code, pending = [], False, ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code, pending = not in_code, ""
            continue
        if in_code:
            line = pending + line.strip()
            pending = ""
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            found += [m.group(0) for m in re.finditer(r"(?<![\w/.-])datagen [^|#;&>]*", line)]
    found += re.findall(r"`(datagen [^`]+)`", text)
    found = [c.split("`")[0] for c in found]  # `datagen build X` (...) inside a code block
    return [c.strip() for c in found]


def _cases() -> list[tuple[str, str]]:
    return [(doc.name, cmd) for doc in DOCS for cmd in _command_lines(doc.read_text(encoding="utf-8"))]


def _resolve(tokens: list[str]):
    """(command path, click command, the rest) for ``datagen`` + tokens."""
    cmd = typer.main.get_command(app)
    path: list[str] = []
    rest = list(tokens)
    while rest and hasattr(cmd, "commands") and not rest[0].startswith("-"):
        if rest[0] not in cmd.commands:
            return path, None, rest
        path.append(rest[0])
        cmd = cmd.commands[rest.pop(0)]
    return path, cmd, rest


BUNDLED = {CptCorpusRecipe: "cpt-corpus", TasksRecipe: "tasks", RlPoolRecipe: "rl-pool", AllRecipe: "all",
           ValidateRecipe: "validate", QualityRecipe: "quality", TeacherRecipe: "teacher"}


def _keys(model) -> tuple[set[str], set[str]]:
    """Leaf keys of a recipe, and those whose value is a mapping (any sub-key is allowed);
    defaults from the bundled recipe (some models have required blocks)."""
    cfg, _ = load_recipe(model, None, BUNDLED[model])
    keys = recipe_keys(model, defaults=cfg.model_dump(mode="json"))
    return {k for k, _, _ in keys}, {k for k, d, _ in keys if isinstance(d, dict)}


def _key_ok(model, key: str) -> bool:
    leaves, mappings = _keys(model)
    return key in leaves or any(key.startswith(m + ".") for m in mappings)


CASES = _cases()


def test_the_documents_have_commands():
    assert len(CASES) > 100


@pytest.mark.parametrize(("doc", "line"), CASES, ids=[f"{d}:{c[:60]}" for d, c in CASES])
def test_documented_command_exists_with_its_flags_and_keys(doc, line):
    try:
        tokens = shlex.split(line)[1:]
    except ValueError:  # an unbalanced quote in prose: the words up to it
        tokens = line.split()[1:]
    tokens = tokens[: tokens.index("--")] if "--" in tokens else tokens
    for alternative in _alternatives(tokens):
        _check(doc, line, alternative)


def _alternatives(tokens: list[str]) -> list[list[str]]:
    """``env plan|build|dockerfile REPO`` is three commands; ``build X`` any build."""
    root = typer.main.get_command(app)
    if len(tokens) > 1 and tokens[1] == "X" and tokens[0] in root.commands:
        return [[tokens[0], name, *tokens[2:]] for name in root.commands[tokens[0]].commands]
    if len(tokens) > 1 and "|" in tokens[1] and not tokens[1].startswith("-"):
        return [[tokens[0], name, *tokens[2:]] for name in tokens[1].split("|")]
    return [tokens]


def _check(doc: str, line: str, tokens: list[str]) -> None:
    path, cmd, rest = _resolve([t for t in tokens if t != "..."])
    assert cmd is not None, f"{doc}: no command `datagen {' '.join(path + rest[:1])}` ({line!r})"
    root = typer.main.get_command(app)
    flags = {o for p in [*cmd.params, *root.params] for o in [*p.opts, *p.secondary_opts]} | {"-h", "--help"}
    for token in rest:
        if token.startswith("-") and token not in ("-", "--"):
            name = token.split("=", 1)[0]
            assert name in flags, f"{doc}: `datagen {' '.join(path)}` has no option {name} ({line!r})"
    model = RECIPES.get(tuple(path))
    if model is None:
        return
    sets = [rest[i + 1] for i, t in enumerate(rest[:-1]) if t == "--set"]
    for item in sets:
        key = item.split("=", 1)[0]
        if model is AllRecipe:
            own, routed = route_overrides([item])
            stage = next((s for s, items in routed.items() if items), None)
            ok = _key_ok(STAGE_MODELS[stage], routed[stage][0].split("=", 1)[0]) if stage else _key_ok(AllRecipe, key)
        else:
            ok = _key_ok(model, key)
        assert ok, f"{doc}: `datagen {' '.join(path)}` has no recipe key {key!r} ({line!r})"


@pytest.mark.parametrize("line", [
    "datagen build cpt-corpus --bogus",
    "datagen build cpt-corpus --set crawl.max_file_byte=3",
    "datagen build all --set tasks.synth.scal=3",
    "datagen sandbox run -w ./repo -- true",
    "datagen nosuch out",
    "datagen pool nosuch",
])
def test_the_check_catches_a_wrong_command(line):
    with pytest.raises(AssertionError):
        test_documented_command_exists_with_its_flags_and_keys("x.md", line)
