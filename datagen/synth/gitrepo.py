"""The git repositories a tasks build emits (``OUT/repos/<repo>.git``).

Each holds one commit with the clean source (branch ``main``) and one commit per task on
top of it (branch ``tasks/<instance_id>``), whose tree is the buggy state: checking out a
task's ``base_commit`` gives the repo as the agent finds it, and the task's ``patch`` is
``git diff base_commit clean``. Author, committer and dates are fixed, so the same
changes always give the same commit ids (the build is deterministic down to them).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

_IDENTITY = {
    "GIT_AUTHOR_NAME": "datagen", "GIT_AUTHOR_EMAIL": "datagen@localhost",
    "GIT_COMMITTER_NAME": "datagen", "GIT_COMMITTER_EMAIL": "datagen@localhost",
    "GIT_AUTHOR_DATE": "2020-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00+0000",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
}


class TaskRepo:
    """A bare repository written through git plumbing (no working tree, no checkout)."""

    def __init__(self, path: Path):
        self.path = path
        if not (path / "HEAD").exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True,
                           env={**os.environ, **_IDENTITY}, capture_output=True)

    def git(self, *args: str, input: bytes | None = None, index: Path | None = None,
            work_tree: Path | None = None) -> str:
        env = {**os.environ, **_IDENTITY}
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        cmd = ["git", f"--git-dir={self.path}"]
        if work_tree is not None:
            cmd.append(f"--work-tree={work_tree}")
        proc = subprocess.run([*cmd, *args], input=input, capture_output=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()[:300]}")
        return proc.stdout.decode("utf-8", "surrogateescape")

    def commit_folder(self, folder: Path, message: str) -> str:
        """Commit every file of ``folder`` as a root commit; ``main`` points to it."""
        with tempfile.TemporaryDirectory() as tmp:
            index = Path(tmp) / "index"
            self.git("add", "-A", "-f", ".", index=index, work_tree=folder)
            tree = self.git("write-tree", index=index).strip()
        commit = self.git("commit-tree", tree, "-m", message).strip()
        self.git("update-ref", "refs/heads/main", commit)
        return commit

    def commit_changes(self, parent: str, changes: dict[str, str | None], message: str) -> str:
        """A commit on ``parent`` with ``changes`` (path -> new text, None deletes)."""
        modes = self._modes(parent, list(changes))
        lines = []
        for path, text in sorted(changes.items()):
            if text is None:
                lines.append(f"0 {'0' * 40}\t{path}")
                continue
            oid = self.git("hash-object", "-w", "--stdin", input=text.encode("utf-8")).strip()
            lines.append(f"{modes.get(path, '100644')} {oid}\t{path}")
        with tempfile.TemporaryDirectory() as tmp:
            index = Path(tmp) / "index"
            self.git("read-tree", parent, index=index)
            self.git("update-index", "--index-info", input="\n".join(lines).encode() + b"\n", index=index)
            tree = self.git("write-tree", index=index).strip()
        return self.git("commit-tree", tree, "-p", parent, "-m", message).strip()

    def _modes(self, commit: str, paths: list[str]) -> dict[str, str]:
        out = self.git("ls-tree", commit, "--", *paths)
        return {line.split("\t", 1)[1]: line.split()[0] for line in out.splitlines() if "\t" in line}

    def diff(self, a: str, b: str) -> str:
        """``git diff a b`` with the default a/ b/ prefixes, whatever the user's config."""
        return self.git("-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "diff",
                        "--no-color", "--no-ext-diff", "--no-renames", a, b)

    def set_branch(self, name: str, commit: str) -> None:
        self.git("update-ref", f"refs/heads/{name}", commit)

    def show(self, commit: str, path: str) -> str:
        return self.git("show", f"{commit}:{path}")
