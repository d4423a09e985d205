"""Find repositories among the inputs and list their files (no content is read here).

An input is a directory (one repository), a git working tree (we read HEAD, not the
working tree), or a bare repository. Listing decides every skip that needs only the
path and size (gitignored, vendored, symlink, too large, binary by extension, license),
so the crawl stage never reads what it will not keep.
"""

from __future__ import annotations

import glob
import hashlib
import os
import stat
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from datagen.crawl.language import detect_language
from datagen.crawl.license import detect_license, is_license_file
from datagen.crawl.rules import CrawlRules
from datagen.errors import UserError
from datagen.resources import data_dir

REPO_ERROR_PATH = "."  # the `path` of a row that stands for a whole repo that could not be read


@dataclass
class Repo:
    name: str
    source: str  # the input as the user gave it
    root: str  # absolute path
    kind: str  # "dir" | "git" | "bare"
    license: str | None = None
    head: str | None = None  # commit id for git repos
    remote: str | None = None
    error: str | None = None  # repo-level reason (broken_repo, empty_repo)


@dataclass
class ListedFile:
    repo: str
    path: str  # surrogate-escaped where the name is not UTF-8 (``datagen.crawl.paths``)
    size: int
    skip: str | None = None  # a DropReason, with ": detail" for broken_repo
    lang: str | None = None
    git_oid: str | None = None
    extra: dict = field(default_factory=dict)


def file_id(repo: str, path: str) -> str:
    """Stable id of a file; ``path`` may hold surrogate escapes (a name that is not UTF-8)."""
    return hashlib.sha1(f"{repo}/{path}".encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _git(root: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", root, *args], capture_output=True, check=check, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    )


def expand_inputs(inputs: list[str]) -> list[tuple[str, Path]]:
    """Resolve inputs (globs allowed; bundled ``sample_data/`` as fallback) to directories.

    Raises ``UserError`` before any work when an input does not exist.
    """
    out: list[tuple[str, Path]] = []
    for given in inputs:
        expanded = os.path.expanduser(given)
        candidates = sorted(glob.glob(expanded)) if glob.has_magic(expanded) else [expanded]
        if not candidates or not any(os.path.exists(c) for c in candidates):
            if given.startswith("sample_data/") or given == "sample_data":
                rest = given[len("sample_data") :].lstrip("/")
                base = data_dir("sample_data")
                pattern = str(base / rest) if rest else str(base)
                candidates = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        found = [c for c in candidates if os.path.isdir(c)]
        if not found:
            raise UserError(f"input not found or not a directory: {given}")
        out.extend((given if len(found) == 1 else c, Path(c)) for c in found)
    return out


def _is_bare(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def open_repo(source: str, path: Path, name: str) -> Repo:
    root = str(path.resolve())
    if (path / ".git").exists():
        kind = "git"
    elif _is_bare(path):
        kind = "bare"
    else:
        return Repo(name=name, source=source, root=root, kind="dir")
    repo = Repo(name=name, source=source, root=root, kind=kind)
    head = _git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
    if head.returncode != 0:
        # No commit behind HEAD: an empty repo has no ref at all; anything else is broken
        # (garbage HEAD, a ref to a missing object, no object store, ...).
        probe = _git(root, "rev-parse", "--git-dir", check=False)
        ref = _git(root, "rev-parse", "--verify", "-q", "HEAD", check=False)
        if probe.returncode == 0 and ref.returncode != 0 and not _git(root, "for-each-ref", check=False).stdout:
            repo.error = "empty_repo"
        else:
            detail = (probe.stderr or head.stderr).decode(errors="replace").strip().splitlines()
            repo.error = "broken_repo" + (f": {detail[0][:200]}" if detail else "")
        return repo
    repo.head = head.stdout.decode().strip()
    remote = _git(root, "config", "--get", "remote.origin.url", check=False)
    repo.remote = remote.stdout.decode().strip() or None
    return repo


def repo_name_for(path: Path, given: str, names: dict[str, str]) -> str:
    if given in names:
        return names[given]
    if str(path) in names:
        return names[str(path)]
    resolved = path.resolve()
    name = resolved.name
    if name == ".git":  # `repo/.git` given directly: name it after the working tree
        return resolved.parent.name
    return name[:-4] if name.endswith(".git") and len(name) > 4 else name


class _GitIgnore:
    """Stacked .gitignore files: the deepest file with a matching rule decides."""

    def __init__(self) -> None:
        self.specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []

    def add(self, base: str, text: str) -> None:
        spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
        self.specs.append((base, spec))
        self.specs.sort(key=lambda s: -len(s[0]))

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        for base, spec in self.specs:
            if base and not rel.startswith(base + "/"):
                continue
            sub = rel[len(base) + 1 :] if base else rel
            res = spec.check_file(sub + "/" if is_dir else sub)
            if res.include is not None:
                return res.include
        return False


def _license_from_texts(texts: list[tuple[str, bytes]]) -> str | None:
    for _name, data in sorted(texts, key=lambda t: (len(t[0]), t[0])):
        lic = detect_license(data[:200_000].decode("utf-8", "replace"))
        if lic:
            return lic
    return None


def list_dir(repo: Repo, rules: CrawlRules) -> list[ListedFile]:
    """Walk a plain directory; every entry becomes a ListedFile (skips carry a reason)."""
    files: list[ListedFile] = []
    ignore = _GitIgnore()
    license_texts: list[tuple[str, bytes]] = []
    root = repo.root

    def onerror(err: OSError) -> None:
        rel = os.path.relpath(err.filename, root) if err.filename else REPO_ERROR_PATH
        files.append(ListedFile(repo.name, rel.replace(os.sep, "/"), 0, skip="unreadable"))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        dir_ignored = bool(rel_dir) and rules.respect_gitignore and ignore.ignored(rel_dir, True)
        if rules.respect_gitignore and ".gitignore" in filenames and not dir_ignored:
            try:
                with open(os.path.join(dirpath, ".gitignore"), encoding="utf-8", errors="replace") as fh:
                    ignore.add(rel_dir, fh.read())
            except OSError:
                pass
        keep_dirs = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d in rules.vcs_dirs:
                continue
            if os.path.islink(full):
                files.append(ListedFile(repo.name, rel, 0, skip="symlink"))
                continue
            keep_dirs.append(d)
        dirnames[:] = keep_dirs
        for fname in sorted(filenames):
            full = os.path.join(dirpath, fname)
            rel = f"{rel_dir}/{fname}" if rel_dir else fname
            try:
                st = os.lstat(full)
            except OSError:
                files.append(ListedFile(repo.name, rel, 0, skip="unreadable"))
                continue
            lf = ListedFile(repo.name, rel, st.st_size, lang=detect_language(rel))
            if stat.S_ISLNK(st.st_mode):
                lf.skip = "symlink"
            elif not stat.S_ISREG(st.st_mode):
                lf.skip = "not_regular_file"
            elif rules.respect_gitignore and (dir_ignored or ignore.ignored(rel)):
                lf.skip = "gitignored"
            if not rel_dir and is_license_file(fname) and lf.skip is None and st.st_size < 1_000_000:
                try:
                    with open(full, "rb") as fh:
                        license_texts.append((fname, fh.read()))
                except OSError:
                    pass
            files.append(lf)
    repo.license = _license_from_texts(license_texts)
    return files


def list_git(repo: Repo, rules: CrawlRules) -> list[ListedFile]:
    """List the files of HEAD (tracked content, not the working tree)."""
    proc = _git(repo.root, "ls-tree", "-r", "-z", "-l", "--full-tree", "HEAD", check=False)
    if proc.returncode != 0:
        repo.error = "broken_repo"
        return []
    files: list[ListedFile] = []
    gitignores: list[tuple[str, str]] = []
    license_oids: list[tuple[str, str]] = []
    missing: list[str] = []
    for entry in proc.stdout.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, otype, oid, size = meta.decode().split()
        path = raw_path.decode("utf-8", "surrogateescape")
        if size == "BAD":  # git's word for a blob it cannot read: absent from the object store
            missing.append(path)
            continue
        lf = ListedFile(repo.name, path, int(size) if size != "-" else 0, git_oid=oid,
                        lang=detect_language(path))
        if otype == "commit":
            lf.skip = "submodule"
        elif mode == "120000":
            lf.skip = "symlink"
        if path.rsplit("/", 1)[-1] == ".gitignore":
            gitignores.append((path.rpartition("/")[0], oid))
        if "/" not in path and is_license_file(path) and lf.skip is None:
            license_oids.append((path, oid))
        files.append(lf)
    if missing:
        # HEAD cannot be checked out (a partial clone, a copy without its largest files):
        # nothing built from it would be the repo, so the whole repo is the skip.
        repo.error = (f"broken_repo: {len(missing)} file(s) of HEAD missing from the git object "
                      f"store (e.g. {missing[0][:120]}); fetch or clone the repo again")
        return []
    blobs = read_git_blobs(repo.root, [oid for _, oid in gitignores + license_oids])
    if rules.respect_gitignore and gitignores:
        ignore = _GitIgnore()
        for base, oid in gitignores:
            ignore.add(base, blobs.get(oid, b"").decode("utf-8", "replace"))
        for lf in files:
            if lf.skip is None and _ignored_with_parents(ignore, lf.path):
                lf.skip = "gitignored"
    repo.license = _license_from_texts([(p, blobs.get(o, b"")) for p, o in license_oids])
    return files


def _ignored_with_parents(ignore: _GitIgnore, path: str) -> bool:
    parts = path.split("/")
    for i in range(1, len(parts)):
        if ignore.ignored("/".join(parts[:i]), True):
            return True
    return ignore.ignored(path)


def read_git_blobs(root: str, oids: list[str]) -> dict[str, bytes]:
    """Read blobs with one ``git cat-file --batch`` process."""
    if not oids:
        return {}
    proc = subprocess.run(
        ["git", "-C", root, "cat-file", "--batch"], input="".join(o + "\n" for o in oids).encode(),
        capture_output=True, check=False,
    )
    out: dict[str, bytes] = {}
    buf = memoryview(proc.stdout)
    pos = 0
    for oid in oids:
        nl = proc.stdout.find(b"\n", pos)
        if nl < 0:
            break
        header = bytes(buf[pos:nl]).split()
        pos = nl + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        out[oid] = bytes(buf[pos : pos + size])
        pos += size + 1
    return out


def list_repo(repo: Repo, rules: CrawlRules) -> list[ListedFile]:
    """List a repo's files and apply every path-level skip rule."""
    if repo.error:
        return [ListedFile(repo.name, REPO_ERROR_PATH, 0, skip=repo.error)]
    files = list_dir(repo, rules) if repo.kind == "dir" else list_git(repo, rules)
    if repo.error:
        return [ListedFile(repo.name, REPO_ERROR_PATH, 0, skip=repo.error)]
    if not files:
        return [ListedFile(repo.name, REPO_ERROR_PATH, 0, skip="empty_repo")]
    license_ok = rules.license_allowed(repo.license)
    for lf in files:
        if lf.skip:
            continue
        lf.skip = rules.name_skip(lf.path)
        if lf.skip is None and lf.size > rules.max_file_bytes:
            lf.skip = "too_large"
        if lf.skip is None and not license_ok:
            lf.skip = "license"
    return files


def discover(inputs: list[str], repo_names: dict[str, str]) -> list[Repo]:
    """Open every input as a repo; repo names are made unique in input order (foo, foo-2, ...)."""
    repos: list[Repo] = []
    taken: set[str] = set()
    for given, path in expand_inputs(inputs):
        base = name = repo_name_for(path, given, repo_names)
        n = 2
        while name in taken:
            name = f"{base}-{n}"
            n += 1
        taken.add(name)
        repos.append(open_repo(given, path, name))
    return repos


def fingerprint(repos: list[Repo], files: Iterable[ListedFile]) -> str:
    """Hash of what the crawl will read: git heads, or paths+sizes+mtimes for folders.

    ``files`` is read once, in order, so it may be a stream (e.g. read back from a listing
    on disk); the repos' licenses and errors must be known already (they are hashed first).
    """
    h = hashlib.sha256()
    roots = {r.name: r for r in repos}
    for r in repos:
        h.update(f"{r.name}\0{r.kind}\0{r.head}\0{r.license}\0{r.error}\n".encode())
    for lf in files:
        mtime = 0
        repo = roots[lf.repo]
        if repo.kind == "dir" and lf.skip is None:
            try:
                mtime = os.stat(os.path.join(repo.root, lf.path)).st_mtime_ns
            except OSError:
                mtime = -1
        line = f"{lf.repo}\0{lf.path}\0{lf.size}\0{lf.skip}\0{lf.git_oid}\0{mtime}\n"
        h.update(line.encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:16]
