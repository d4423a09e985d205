"""The project's own files in a Python env: taken out after the install, so the env keeps
the project's metadata (``importlib.metadata.version``, entry points) and its dependencies
but no copy of its code; the code a run imports is the working copy's (``PYTHONPATH``).

Installing the project (plain or editable) puts into ``site-packages`` a copy of every
module of the clean tree (or a ``.pth`` / finder pointing at the env's copy of it), and
its bytecode. Every task of the repo breaks one of those modules, and a run can read the
env: the copy is the answer. ``strip_project`` removes every file the project's RECORD
lists outside its ``.dist-info`` (modules, compiled extensions, bytecode, ``.pth`` files,
``data_files`` and ``scripts`` copies) but the console-script wrappers its entry points
made, and finds where in the repo each of its top-level packages lives (``import_roots``):
a ``lib/`` or ``python/`` layout is put on ``PYTHONPATH`` like ``src/``.
"""

from __future__ import annotations

import configparser
import csv
import io
import json
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse


def site_packages(venv: Path) -> list[Path]:
    return sorted(venv.glob("lib/python*/site-packages"))


def own_distributions(venv: Path, project: Path) -> list[Path]:
    """The ``.dist-info`` folders of distributions installed from ``project`` (a local folder:
    ``direct_url.json`` names it)."""
    out = []
    root = project.resolve()
    for site in site_packages(venv):
        for info in sorted(site.glob("*.dist-info")):
            try:
                url = json.loads((info / "direct_url.json").read_text(encoding="utf-8")).get("url", "")
            except (OSError, ValueError):
                continue
            if not url.startswith("file:"):
                continue
            path = Path(unquote(urlparse(url).path)).resolve()
            if path == root or root in path.parents:
                out.append(info)
    return out


def _scripts(info: Path) -> set[str]:
    """Names of the console and GUI scripts the distribution's entry points make."""
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str
    try:
        parser.read_string((info / "entry_points.txt").read_text(encoding="utf-8"))
    except (OSError, configparser.Error):
        return set()
    return {name for section in ("console_scripts", "gui_scripts") if parser.has_section(section)
            for name in parser.options(section)}


def _record(info: Path) -> list[str]:
    try:
        text = (info / "RECORD").read_text(encoding="utf-8")
    except OSError:
        return []
    return [row[0] for row in csv.reader(io.StringIO(text)) if row]


def strip_project(venv: Path, project: Path) -> tuple[list[str], list[str]]:
    """Remove the project's installed files from ``venv`` (the project was installed from
    the folder ``project``); returns (removed paths relative to the venv, top-level names the
    project installs). Its ``.dist-info`` stays (metadata, no code)."""
    removed: list[str] = []
    tops: set[str] = set()
    venv = venv.resolve()
    for info in own_distributions(venv, project):
        site = info.parent
        scripts = _scripts(info)
        touched: set[Path] = set()
        for rel in _record(info):
            path = (site / rel).resolve()
            if venv not in path.parents or info in path.parents or path == info:
                continue
            inside = path.relative_to(site).parts if site in path.parents else ()
            if not inside and path.parent == venv / "bin" and path.name in scripts:
                continue  # a wrapper the installer wrote: imports the package (the working copy's)
            if len(inside) == 1 and path.suffix in (".so", ".pyd") and not _has_python_source(project, path):
                continue  # a top-level extension built from C: the working copy has no build of it
            if inside:
                top = inside[0].split(".")[0] if len(inside) == 1 else inside[0]
                if not top.startswith("__editable__") and not top.endswith((".pth", ".egg-link")):
                    tops.add(top)
            if path.is_file() or path.is_symlink():
                path.unlink()
                removed.append(path.relative_to(venv).as_posix())
                touched.add(path.parent)
                cache = path.parent / "__pycache__"
                for pyc in cache.glob(f"{path.stem}.*.pyc") if path.suffix == ".py" else ():
                    pyc.unlink()
                    removed.append(pyc.relative_to(venv).as_posix())
        for top in tops:  # a package folder the project alone filled: bytecode and empty folders go too
            folder = site / top
            if folder.is_dir() and not any(p.is_file() and "__pycache__" not in p.parts for p in folder.rglob("*")):
                shutil.rmtree(folder)
        for folder in sorted(touched, key=lambda p: len(p.parts), reverse=True):
            _prune(folder, site)
    return sorted(removed), sorted(tops)


def _has_python_source(project: Path, extension: Path) -> bool:
    """Whether the repo holds a ``.py`` of the extension's module name (compiled from Python,
    by mypyc or Cython: it would run the clean code)."""
    module = extension.name.split(".")[0]
    return any(project.glob(f"{module}.py")) or any(project.glob(f"*/{module}.py"))


def _prune(folder: Path, stop: Path) -> None:
    """Remove ``folder`` and its parents up to ``stop`` while they are empty."""
    while folder != stop and stop in folder.parents and folder.is_dir():
        pycache = folder / "__pycache__"
        if pycache.is_dir() and not any(pycache.iterdir()):
            pycache.rmdir()
        if any(folder.iterdir()):
            return
        folder.rmdir()
        folder = folder.parent


def import_roots(repo: Path, tops: list[str]) -> list[str]:
    """Repo folders (relative, '' for the root) that hold the project's top-level packages or
    modules ``tops``: where its code imports from in a working copy."""
    roots: list[str] = []
    for top in tops:
        hits = []
        for candidate in (repo / top, repo / f"{top}.py"):
            if candidate.exists():
                hits.append("")
        if not hits:
            for path in sorted(repo.glob(f"*/{top}")) + sorted(repo.glob(f"*/*/{top}")) \
                    + sorted(repo.glob(f"*/{top}.py")) + sorted(repo.glob(f"*/*/{top}.py")):
                rel = path.parent.relative_to(repo)
                if rel.parts and rel.parts[0] in (".git", "tests", "test", "build", "dist", "docs"):
                    continue
                if path.is_dir() and not any(path.glob("*.py")):
                    continue
                hits.append(rel.as_posix())
                break
        roots += [h for h in hits[:1] if h not in roots]
    return roots
