"""Bubblewrap back end: a fresh mount, network, PID, IPC and UTS namespace per run.

The sandbox sees read-only system folders, the paths it is given read-only, the working
copy read-write and a size-capped private /tmp; nothing else of the host exists in it.
As root, bwrap builds the sandbox and ``setpriv`` then drops to a leased unprivileged uid
(one per concurrent run), because the kernel ignores RLIMIT_NPROC for uid 0 even inside
a user namespace. The working copy is handed to that uid for the run and given back after.
As root the run writes into a size-capped overlay of the working copy (``disk.py``); its
writes are applied to the working copy when it ends.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from datagen.config.sandbox import SandboxLimits
from datagen.errors import UserError
from datagen.records.tasks import RunResult
from datagen.sandbox.isolation import disk
from datagen.sandbox.isolation.base import MiB, base_env, exec_failure, execute
from datagen.sandbox.isolation.guard import check_workdir, list_workdir

UID_BASE = 200_000
UID_SLOTS = 4096
# System folders a toolchain needs; merged-/usr hosts have /bin etc. as symlinks.
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
    "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime", "/etc/hosts",
    "/etc/ssl", "/etc/ca-certificates", "/etc/mime.types", "/etc/gitconfig",
    "/etc/os-release", "/etc/debian_version", "/etc/lsb-release",
)
_NET_FILES = ("/etc/resolv.conf", "/etc/host.conf", "/etc/gai.conf", "/etc/pip.conf")


# What setpriv (as root) or bwrap itself prints when the command cannot be started.
_LAUNCHER_ERRORS = ("setpriv: failed to execute ", "bwrap: execvp ")


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def _lock_slot(slot: int) -> int | None:
    """An open, exclusively locked fd on ``slot``'s lock file, or None when it is held."""
    folder = Path(tempfile.gettempdir()) / "datagen-sandbox-uids"
    folder.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(folder / str(slot), os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


class UidLease:
    """An exclusive uid for one run, held by a lock file until released. The slot number
    also names the run's folder of capped-disk mounts."""

    def __init__(self) -> None:
        for slot in range(UID_SLOTS):
            if (fd := _lock_slot(slot)) is not None:
                self.fd, self.slot, self.uid = fd, slot, UID_BASE + slot
                return
        raise RuntimeError("no free sandbox uid (4096 runs at once?)")

    def release(self) -> None:
        os.close(self.fd)


def _give(workdir: Path, uid: int, max_files: int) -> dict[str, tuple[int, int]]:
    """Chown the working copy to ``uid``; returns the old owners to restore.

    Refuses (before touching anything) a copy with a setuid/setgid file: chown clears
    those bits, and setting them again afterwards would put back a privileged bit on a
    file the sandbox was free to rewrite. Every other mode survives the hand-over as is.
    """
    paths = list_workdir(workdir, max_files)
    stats = [(path, os.lstat(path)) for path in paths]
    for path, st in stats:
        if stat.S_ISREG(st.st_mode) and st.st_mode & (stat.S_ISUID | stat.S_ISGID):
            raise UserError(
                f"refusing to run in {workdir}: {path} is setuid/setgid "
                f"(mode {stat.S_IMODE(st.st_mode):o}); handing it to the sandbox uid would "
                "clear the bit. Remove it (chmod ug-s) or copy the repo without it")
    owners: dict[str, tuple[int, int]] = {}
    rightful = _rightful_owner(workdir)
    for path, st in stats:
        owners[path] = (_unleased(st.st_uid, rightful[0]), _unleased(st.st_gid, rightful[1]))
        # A hard link may be a host file planted in the copy: it stays the host's.
        if stat.S_ISDIR(st.st_mode) or st.st_nlink == 1:
            os.lchown(path, uid, uid)
    return owners


def _leased(uid: int) -> bool:
    return UID_BASE <= uid < UID_BASE + UID_SLOTS


def _unleased(uid: int, rightful: int) -> int:
    """A file still owned by a sandbox uid was left so by a run that never gave it back
    (datagen killed mid-run): it goes back to the working copy's rightful owner."""
    return rightful if _leased(uid) else uid


def _rightful_owner(workdir: Path) -> tuple[int, int]:
    """The working copy's owner, or, when a killed run left it with a sandbox uid, the
    owner of the folder it lies in (else this process's)."""
    for folder in (workdir, workdir.parent):
        st = os.stat(folder)
        if not _leased(st.st_uid):
            return st.st_uid, (os.getegid() if _leased(st.st_gid) else st.st_gid)
    return os.geteuid(), os.getegid()


def _take_back(workdir: Path, owners: dict[str, tuple[int, int]]) -> None:
    """Restore owners; files the run created go to the working copy's owner (chown
    clears any setuid/setgid bit the run set on them)."""
    default = owners[str(workdir)]
    for path in [str(workdir), *_walk(workdir)]:
        uid, gid = owners.get(path, default)
        os.lchown(path, uid, gid)


def _parents(paths: Sequence[str]) -> list[str]:
    """Ancestors of ``paths`` that the sandbox must create (not / , /tmp or system dirs)."""
    out: list[str] = []
    for path in paths:
        for parent in reversed(Path(path).parents):
            text = str(parent)
            skip = text in ("/", "/tmp") or any(
                text == d or text.startswith(d + "/") for d in _SYSTEM_DIRS + ("/etc",)
            )
            if not skip and text not in out:
                out.append(text)
    return out


def _walk(root: Path):
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            yield os.path.join(dirpath, name)


class HandOver:
    """A working copy given to a sandbox uid (and its capped overlay), until ``release()``."""

    def __init__(self, workdir: Path, lease: UidLease | None, owners: dict[str, tuple[int, int]] | None):
        self.workdir, self.lease, self.owners = workdir, lease, owners
        self.cap: disk.CappedWorkdir | None = None

    def release(self) -> None:
        """Apply the overlay's writes, give the files back, free the uid."""
        try:
            if self.cap is not None:
                self.cap.finish()
        finally:
            if self.lease is not None:
                _take_back(self.workdir, self.owners)
                self.lease.release()


class BwrapSandbox:
    """Runs commands under ``bwrap``; see the module docstring for the layout."""

    name = "bwrap"

    def __init__(self, bwrap: str | None = None):
        self.bwrap = bwrap or bwrap_path()
        if self.bwrap is None:
            raise RuntimeError("bwrap is not installed (Debian: apt-get install bubblewrap)")
        self.as_root = os.geteuid() == 0
        self.setpriv = shutil.which("setpriv") if self.as_root else None
        if self.as_root and self.setpriv is None:
            raise RuntimeError("running as root needs setpriv (util-linux) to drop privileges")
        self._warned_disk = False

    def claims(self) -> dict[str, str]:
        procs = ("RLIMIT_NPROC on a leased unprivileged uid" if self.as_root
                 else "RLIMIT_NPROC on the caller's uid (counts all its processes)")
        return {
            "network": "new network namespace (loopback only)",
            "filesystem": "mount namespace: system dirs + given paths read-only, workdir rw",
            "tmp": "private tmpfs /tmp of tmp_size_mb",
            "processes": procs + "; cgroup pids.max when writable",
            "memory": "cgroup memory.limit_in_bytes when writable, else RLIMIT_AS",
            "cpu": "RLIMIT_CPU",
            "file_size": "RLIMIT_FSIZE",
            "disk": _disk_claim(),
            "timeout": "wall-clock timer, kills the PID namespace",
            "pid/ipc/uts": "new namespaces; --die-with-parent",
        }

    def argv(
        self, cmd: Sequence[str], workdir: Path, limits: SandboxLimits,
        ro_paths: Sequence[Path], uid: int | None, source: Path | None = None,
    ) -> list[str]:
        """bwrap's command line; ``source`` is what appears at the working copy's path
        (the capped overlay of it; default the working copy itself)."""
        args = [self.bwrap, "--die-with-parent", "--new-session", "--unshare-pid",
                "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
        if not limits.network:
            args.append("--unshare-net")
        if not self.as_root:
            args.append("--unshare-user")
        for path in _SYSTEM_DIRS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        args += ["--perms", "0755", "--dir", "/etc"]
        for path in _ETC_FILES + (_NET_FILES if limits.network else ()):
            args += ["--ro-bind-try", path, path]
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--perms", "1777", "--size", str(limits.tmp_size_mb * MiB), "--tmpfs", "/tmp"]
        ro = [str(Path(p).resolve()) for p in ro_paths]
        work = str(workdir.resolve())
        for parent in _parents([*ro, work]):
            # bwrap would make missing parents 0700, which the dropped uid cannot traverse;
            # 0711 lets it pass through to the bound folder without listing the way there
            # (`ls /root` must not show the host's .pyenv next to the interpreter's folder)
            args += ["--perms", "0711", "--dir", parent]
        for path in ro:
            args += ["--ro-bind", path, path]
        args += ["--bind", str(source or work), work, "--chdir", work, "--"]
        if uid is not None:
            args += [self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                     "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
        return args + list(cmd)

    def run(self, cmd: Sequence[str], workdir: Path, limits: SandboxLimits,
            env: Mapping[str, str] | None = None, ro_paths: Sequence[Path] = ()) -> RunResult:
        workdir = Path(workdir).resolve()
        held = self.hand_over(workdir, limits)
        try:
            argv = self.argv(cmd, workdir, limits, ro_paths, held.lease.uid if held.lease else None,
                             source=held.cap.merged if held.cap else None)
            run_env = base_env(env)
            result = execute(argv, backend=self.name, cwd=workdir, env=run_env,
                             limits=limits, use_cgroup=True,
                             disk_full=held.cap.full if held.cap else None)
            return exec_failure(result, cmd[0], _LAUNCHER_ERRORS, run_env["PATH"])
        finally:
            held.release()

    def hand_over(self, workdir: Path, limits: SandboxLimits) -> HandOver:
        """Ready ``workdir`` for runs: as root, a leased uid owns it and writes go to a capped
        overlay until ``release()`` (one run, or a whole session's)."""
        check_workdir(workdir)
        lease = UidLease() if self.as_root else None
        try:
            owners = _give(workdir, lease.uid, limits.max_files) if lease else None
        except BaseException:
            if lease is not None:
                lease.release()
            raise
        held = HandOver(workdir, lease, owners)
        try:
            held.cap = self._capped(workdir, lease, limits) if lease else None
        except BaseException:
            held.release()
            raise
        return held

    def _capped(self, workdir: Path, lease: UidLease, limits: SandboxLimits) -> disk.CappedWorkdir | None:
        """The capped overlay for this run, or None (warned once) where it cannot be made."""
        ok, reason = disk.support()
        if ok:
            clear_stale_mounts()
            try:
                return disk.CappedWorkdir.mount(workdir, lease.slot, limits.disk_mb, lease.uid)
            except OSError as exc:  # e.g. a working copy on a filesystem overlayfs refuses
                reason = f"cannot mount a capped overlay on {workdir}: {exc.strerror or exc}"
        if not self._warned_disk:
            print(f"WARNING: sandbox: disk_mb NOT ENFORCED ({reason}); a run may fill the "
                  "host disk through its working copy", file=sys.stderr)
            self._warned_disk = True
        return None


def _disk_claim() -> str:
    ok, reason = disk.support()
    if ok:
        return "writes to the working copy go to an overlay layer on a tmpfs of disk_mb"
    return f"NOT ENFORCED: {reason}"


def clear_stale_mounts() -> None:
    """Detach the capped-disk mounts of slots no process holds (left by a killed datagen)."""
    for slot in disk.mounted_slots():
        fd = _lock_slot(slot)
        if fd is not None:
            try:
                disk.clear_slot(disk.slot_folder(slot))
            finally:
                os.close(fd)
