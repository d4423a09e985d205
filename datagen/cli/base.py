"""What every ``datagen`` command shares: ``-h``, readable usage lines, one error formatter.

``DatagenTyper`` is ``typer.Typer`` with these defaults, so every command group and
command gets them without repeating them:

- ``-h`` as well as ``--help`` (click's context settings are inherited by sub-commands);
- usage lines in click's own convention (``OUT QUERY [PATH]...``; typer 0.29 writes
  ``{out} {QUERY} [[PATH]...]...``), and no ``<bool>`` type after a flag;
- one error formatter (``DatagenGroup.invoke``): a ``UserError`` or an ``OSError`` from any
  command becomes one line on stderr, ``error: ...`` naming the path and what to do,
  exit 2 (``--debug`` re-raises, for the traceback). See ``datagen.cli.errors``.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from datagen.cli.errors import error_line

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}


_TYPE_NAMES = {"str": "TEXT", "int": "INT", "float": "FLOAT", "Path": "PATH", "bool": "BOOL"}


def _value_name(option: TyperOption) -> str | None:
    """``TEXT`` / ``INT`` / ``PATH`` for an option's value (``None``: keep typer's; so also
    on a typer older than 0.29, whose options have no ``type_descriptor``)."""
    desc = getattr(option, "type_descriptor", None)
    if desc is None or desc.is_choice:
        return None
    if desc.is_path:
        return "PATH"
    kind = desc.annotation
    if desc.is_list:
        kind = getattr(kind, "__args__", (str,))[0]
    return _TYPE_NAMES.get(getattr(kind, "__name__", ""), None)


def _no_type(ctx: Any) -> None:
    return None


def _plain_params(params: list) -> None:
    """Arguments named in capitals (``OUT``), flags with no ``<bool>`` type column, an
    option's value named by click's convention (``TEXT``, ``INT``, ``PATH``, not
    ``<list[str]>``); choices keep their ``<a|b|c>`` list."""
    for param in params:
        if isinstance(param, TyperArgument):
            param.metavar = param.metavar or param.name.upper()
            param.display_type_rich = _no_type  # the name says it; typer would add <list[str]>
        elif param.metavar is not None:
            continue
        elif isinstance(param, TyperOption) and param.is_flag:
            param.metavar = ""
        elif isinstance(param, TyperOption) and "--set" in param.opts:
            param.metavar = "KEY=VALUE"
        elif isinstance(param, TyperOption):
            param.metavar = _value_name(param)


def _plain_help(option: Any) -> Any:
    """``-h, --help`` without a ``<bool>`` after it."""
    if option is not None:
        option.metavar = ""
    return option


def _usage_pieces(command: Any, ctx: Any) -> list[str]:
    """click's usage line: ``[OPTIONS] OUT QUERY [PATH]...`` (optional in brackets)."""
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if not isinstance(param, TyperArgument) or param.hidden:
            continue
        name = param.metavar or param.name.upper()
        name = name if param.required else f"[{name}]"
        pieces.append(name + ("..." if param.nargs != 1 else ""))
    return pieces


def reflow(text: str | None) -> str | None:
    """A docstring for the help page: each prose paragraph on one line (the terminal wraps
    it: typer keeps single line breaks, so a paragraph wrapped at 90 columns came out
    ragged at 80), paragraphs whose lines are indented (examples) as they are."""
    if not text:
        return text
    paragraphs = []
    for para in inspect.cleandoc(text).split("\n\n"):
        lines = para.split("\n")
        indented = any(line.startswith((" ", "\t")) for line in lines)
        paragraphs.append(para if indented or para.startswith("\b") else " ".join(x.strip() for x in lines))
    return "\n\n".join(paragraphs)


class DatagenCommand(TyperCommand):
    """A command with plain usage lines and flags (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain_params(self.params)
        self.help = reflow(self.help)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return _usage_pieces(self, ctx)

    def get_help_option(self, ctx: Any) -> Any:
        return _plain_help(super().get_help_option(ctx))


class DatagenGroup(TyperGroup):
    """A command group that formats every error of the commands under it once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain_params(self.params)
        self.help = reflow(self.help)

    def get_help_option(self, ctx: Any) -> Any:
        return _plain_help(super().get_help_option(ctx))

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:  # noqa: BLE001 - only what error_line knows is caught
            line = error_line(exc)
            if line is None or os.environ.get("DATAGEN_DEBUG"):
                raise
            typer.secho(f"error: {line}", fg="red", err=True)
            raise typer.Exit(2) from exc


class DatagenTyper(typer.Typer):
    """``typer.Typer`` whose groups and commands are ``DatagenGroup`` / ``DatagenCommand``."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", DatagenGroup)
        kwargs["context_settings"] = {**HELP_OPTIONS, **(kwargs.get("context_settings") or {})}
        kwargs.setdefault("add_completion", False)
        kwargs.setdefault("pretty_exceptions_enable", False)
        super().__init__(**kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", DatagenCommand)
        return super().command(*args, **kwargs)


__all__ = ["DatagenTyper", "DatagenGroup", "DatagenCommand", "HELP_OPTIONS"]
