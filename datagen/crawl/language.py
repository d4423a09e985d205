"""Language detection by extension, file name and shebang.

Languages are lowercase ids (``python``, ``cpp``, ...); Markdown/YAML/JSON/TOML are kept as
data files, with their own quality thresholds (``filters/quality.yaml``).
"""

from __future__ import annotations

import re

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp",
    ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby",
    ".php": "php",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".ksh": "shell",
    ".md": "markdown", ".markdown": "markdown",
    ".yaml": "yaml", ".yml": "yaml",
    ".json": "json",
    ".toml": "toml",
}

FILENAMES: dict[str, str] = {
    "Rakefile": "ruby", "Gemfile": "ruby", "Vagrantfile": "ruby",
    "Pipfile": "toml", "Cargo.lock": "toml", "go.sum": None,  # type: ignore[dict-item]
    ".bashrc": "shell", ".bash_profile": "shell", ".zshrc": "shell", ".profile": "shell",
    "configure": "shell",
}

_SHEBANG = re.compile(rb"^#!\s*(?:/usr/bin/env\s+(?:-\S+\s+)*)?(?:\S*/)?(\S+)")
INTERPRETERS: dict[str, str] = {
    "python": "python", "python2": "python", "python3": "python", "pypy": "python", "pypy3": "python",
    "node": "javascript", "nodejs": "javascript", "deno": "typescript", "ts-node": "typescript",
    "sh": "shell", "bash": "shell", "zsh": "shell", "ksh": "shell", "dash": "shell",
    "ruby": "ruby", "php": "php",
}

def detect_language(path: str, head: bytes | None = None) -> str | None:
    """Language of ``path`` (repo-relative) from its name, else from a shebang in ``head``."""
    name = path.rsplit("/", 1)[-1]
    if name in FILENAMES:
        return FILENAMES[name]
    dot = name.rfind(".")
    if dot > 0:
        lang = EXTENSIONS.get(name[dot:].lower())
        if lang:
            return lang
    if head and head.startswith(b"#!"):
        m = _SHEBANG.match(head.split(b"\n", 1)[0])
        if m:
            interp = m.group(1).decode("ascii", "ignore")
            interp = re.sub(r"[\d.]+$", "", interp) or interp
            return INTERPRETERS.get(interp) or INTERPRETERS.get(m.group(1).decode("ascii", "ignore"))
    return None
