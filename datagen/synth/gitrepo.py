"""The git repositories of a tasks build.

Two kinds, never mixed:

- the **store** (``<work>/git/<repo>.git``, inside the build's work folder): the clean source
  of one repo and every task's buggy tree, so the build can take each fix as
  ``git diff base_commit clean``. It never leaves the work folder: it holds every answer.
- a **sealed environment** per task (``OUT/envs/<env_id>.git``): a bare repository holding
  one root commit (the buggy tree, no parent) on one branch named by the opaque ``env_id``,
  with a neutral author, date and message, and no other object. What a trainer clones holds
  nothing from which the fix can be read: no clean tree, no sibling task, no strategy name.

Authors, committers and dates are fixed and packs are written by one thread, so the same
changes always give the same commit ids and the same bytes (the build is deterministic).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

_IDENTITY = {
    "GIT_AUTHOR_NAME": "datagen", "GIT_AUTHOR_EMAIL": "datagen@localhost",
    "GIT_COMMITTER_NAME": "datagen", "GIT_COMMITTER_EMAIL": "datagen@localhost",
    "GIT_AUTHOR_DATE": "2020-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00+0000",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
}
# What the agent sees of a task's one commit: nothing about how the task was made.
NEUTRAL = {"GIT_AUTHOR_NAME": "Maintainers", "GIT_AUTHOR_EMAIL": "maintainers@example.com",
           "GIT_COMMITTER_NAME": "Maintainers", "GIT_COMMITTER_EMAIL": "maintainers@example.com"}
NEUTRAL_MESSAGE = "Initial commit"


class TaskRepo:
    """A bare repository written through git plumbing (no working tree, no checkout)."""

    def __init__(self, path: Path):
        self.path = path
        if not (path / "HEAD").exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True,
                           env={**os.environ, **_IDENTITY}, capture_output=True)

    def git(self, *args: str, input: bytes | None = None, index: Path | None = None,
            work_tree: Path | None = None, identity: dict[str, str] | None = None) -> str:
        env = {**os.environ, **_IDENTITY, **(identity or {})}
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
        return self.git("commit-tree", self.tree_with(parent, changes), "-p", parent, "-m", message).strip()

    def tree_with(self, parent: str, changes: dict[str, str | None]) -> str:
        """The tree of ``parent`` with ``changes`` (path -> new text, None deletes)."""
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
            return self.git("write-tree", index=index).strip()

    def root_commit(self, tree: str) -> str:
        """A commit of ``tree`` with no parent, the neutral author and message."""
        return self.git("commit-tree", tree, "-m", NEUTRAL_MESSAGE, identity=NEUTRAL).strip()

    def blobs(self, treeish: str, paths: list[str] | None = None) -> dict[str, str]:
        """path -> blob id of every file of ``treeish`` (or of ``paths`` only)."""
        out = self.git("ls-tree", "-r", "-z", treeish, *(["--", *paths] if paths else []))
        blobs = {}
        for entry in out.split("\0"):
            if "\t" in entry:
                meta, path = entry.split("\t", 1)
                kind, oid = meta.split()[1:3]
                if kind == "blob":
                    blobs[path] = oid
        return blobs

    def seal(self, commit: str, dest: Path, ref: str) -> None:
        """Write the sealed environment of ``commit`` to ``dest``: a new bare repository
        holding only the objects ``commit`` reaches, on branch ``ref`` (its HEAD)."""
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **_IDENTITY}
        # no template: no sample hooks, no description file, nothing but the task
        subprocess.run(["git", "init", "-q", "--bare", "--template=", "-b", ref, str(dest)], check=True,
                       env=env, capture_output=True)
        pack = subprocess.run(["git", f"--git-dir={self.path}", "-c", "pack.threads=1", "pack-objects",
                               "--revs", "--stdout", "-q"], input=f"{commit}\n".encode(), env=env,
                              capture_output=True, check=True).stdout
        sealed = TaskRepo(dest)
        sealed.git("-c", "pack.threads=1", "index-pack", "--stdin", input=pack)
        sealed.git("update-ref", f"refs/heads/{ref}", commit)

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
