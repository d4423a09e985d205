"""A size cap on what one run may write into its working copy.

RLIMIT_FSIZE caps each file, not their total, and measuring the folder while the run goes
overshoots by whatever is written between two looks. Instead the run writes into an
overlay: the working copy is its read-only lower layer, and every write (new files,
changed files, deletions) lands in an upper layer on a tmpfs of ``disk_mb``. When that
fills, the kernel answers ENOSPC, which is exact. After the run the upper layer is
applied to the working copy, so callers see the same folder as without the cap.

The mounts live under a folder per sandbox uid slot (``<tmp>/datagen-sandbox-disks/N``),
which only the process holding that slot's lease uses; a datagen killed mid-run leaves its
mounts there, and the next run detaches those of every slot whose lease is free.

Mounting needs root (``mount(2)``) and a kernel with overlayfs; where either is missing
the cap is not enforced and ``support()`` says why (shown by ``datagen sandbox check``
and warned once per process by the bwrap back end).
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import stat
import tempfile
from pathlib import Path

MiB = 1024 * 1024
_MS_NOSUID, _MS_NODEV, _MNT_DETACH = 0x2, 0x4, 0x2
_OPAQUE = "trusted.overlay.opaque"
# Plain layers only: with redirects or metadata-only copy-up the upper layer would not
# hold a whole file for every change, and applying it would need the overlay's internals.
_OVERLAY_OPTS = "redirect_dir=off,metacopy=off,index=off,xino=off"


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _mount(source: str, target: Path, fstype: str, data: str) -> None:
    flags = ctypes.c_ulong(_MS_NOSUID | _MS_NODEV)
    if _libc().mount(source.encode(), os.fsencode(target), fstype.encode(), flags,
                     data.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {fstype}: {os.strerror(err)}", str(target))


def _umount(target: Path, detach: bool = False) -> bool:
    """Unmount ``target``; False when nothing was mounted there."""
    if _libc().umount2(os.fsencode(target), _MNT_DETACH if detach else 0) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 2):  # EINVAL: not a mount point; ENOENT: no such folder
        return False
    raise OSError(err, f"umount: {os.strerror(err)}", str(target))


def _escape(path: Path) -> str:
    """A path as overlayfs reads it in a mount option (``,`` and ``:`` separate values)."""
    return str(path).replace("\\", "\\\\").replace(",", "\\,").replace(":", "\\:")


def slot_folder(slot: int) -> Path:
    return _root() / str(slot)


def _root() -> Path:
    return Path(tempfile.gettempdir()) / "datagen-sandbox-disks"


def mounted_slots() -> set[int]:
    """Slots with something mounted in their folder (live runs and stale leftovers)."""
    prefix = f"{_root()}/"
    slots = set()
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as lines:
        for line in lines:
            point = line.split(" ", 5)[4]  # octal-escaped; ours hold no space or backslash
            if point.startswith(prefix) and point[len(prefix):].split("/")[0].isdigit():
                slots.add(int(point[len(prefix):].split("/")[0]))
    return slots


class CappedWorkdir:
    """The overlay a run sees as its working copy: ``merged`` (bind it into the sandbox),
    writes capped at ``size_mb``. ``finish()`` applies the writes and unmounts."""

    def __init__(self, workdir: Path, folder: Path, size_mb: int):
        self.workdir, self.size_mb = workdir, size_mb
        self.layer = folder / "layer"  # the tmpfs
        self.upper, self.merged = self.layer / "upper", folder / "merged"

    @classmethod
    def mount(cls, workdir: Path, slot: int, size_mb: int, owner: int) -> CappedWorkdir:
        """Mount the overlay for a run by the sandbox uid ``owner`` in ``slot``'s folder."""
        folder = slot_folder(slot)
        clear_slot(folder)
        folder.parent.mkdir(mode=0o700, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        cap = cls(workdir, folder, size_mb)
        cap._mount_layers(owner)
        return cap

    def _mount_layers(self, owner: int) -> None:
        self.layer.mkdir(exist_ok=True)
        self.merged.mkdir(exist_ok=True)
        _mount("datagen-disk", self.layer, "tmpfs", f"size={self.size_mb * MiB},mode=0700")
        try:
            self.upper.mkdir()
            (self.layer / "work").mkdir()
            # the overlay's root takes the upper folder's owner and mode
            os.chown(self.upper, owner, owner)
            os.chmod(self.upper, stat.S_IMODE(os.stat(self.workdir).st_mode))
            _mount("datagen-overlay", self.merged, "overlay",
                   f"lowerdir={_escape(self.workdir)},upperdir={_escape(self.upper)},"
                   f"workdir={_escape(self.layer / 'work')},{_OVERLAY_OPTS}")
        except BaseException:
            _umount(self.layer, detach=True)
            raise

    def full(self) -> str | None:
        """Evidence that the run filled its cap (no free block left), else None."""
        st = os.statvfs(self.layer)
        if st.f_bavail > 0:
            return None
        used = (st.f_blocks - st.f_bfree) * st.f_frsize / MiB
        return f"working copy writes filled disk_mb ({used:.0f} of {self.size_mb} MB, ENOSPC)"

    def finish(self) -> None:
        """Unmount the overlay, apply its writes to the working copy, drop the tmpfs."""
        try:
            # detached at once; the run's processes are gone, so nothing still uses it
            if _umount(self.merged, detach=True):
                apply_upper(self.upper, self.workdir)
                os.chmod(self.workdir, stat.S_IMODE(os.lstat(self.upper).st_mode))
        finally:
            _umount(self.layer, detach=True)


def clear_slot(folder: Path) -> None:
    """Detach what a killed run left mounted in a slot's folder (overlay first)."""
    for target in (folder / "merged", folder / "layer"):
        _umount(target, detach=True)


def apply_upper(upper: Path, lower: Path) -> None:
    """Make ``lower`` what the overlay showed: copy new and changed entries, remove
    deleted ones (whiteouts), empty folders the run replaced wholesale (opaque ones).

    Every name is replaced, never written through: a hard link or symlink already in the
    working copy keeps pointing where it did, and nothing is followed out of ``lower``.
    The run is over (its PID namespace is gone), so nothing changes under our feet.
    """
    with os.scandir(upper) as entries:
        names = sorted(entry.name for entry in entries)
    for name in names:
        src, dest = os.path.join(upper, name), os.path.join(lower, name)
        st = os.lstat(src)
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # whiteout: deleted by the run
            _remove(dest)
        elif stat.S_ISDIR(st.st_mode):
            _apply_dir(src, dest, st)
        else:
            _remove(dest)
            _copy_entry(src, dest, st)


def _apply_dir(src: str, dest: str, st: os.stat_result) -> None:
    if _is_opaque(src) or not _is_dir(dest):
        _remove(dest)
        os.mkdir(dest, 0o700)
    apply_upper(Path(src), Path(dest))
    os.chmod(dest, stat.S_IMODE(st.st_mode))


def _copy_entry(src: str, dest: str, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(src), dest)
    elif stat.S_ISREG(st.st_mode):
        shutil.copy2(src, dest, follow_symlinks=False)
    elif stat.S_ISFIFO(st.st_mode):
        os.mkfifo(dest, stat.S_IMODE(st.st_mode))
    # sockets and device nodes cannot be made by an unprivileged run, and are not kept


def _is_opaque(path: str) -> bool:
    try:
        return os.getxattr(path, _OPAQUE, follow_symlinks=False) == b"y"
    except OSError:
        return False


def _is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _remove(path: str) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


@functools.cache
def support() -> tuple[bool, str]:
    """Whether a capped overlay can be mounted here: (ok, reason). Tried once."""
    if os.geteuid() != 0:
        return False, "mounting the capped overlay needs root"
    probe = Path(tempfile.mkdtemp(prefix="datagen-disk-probe-"))
    try:
        (probe / "lower").mkdir()
        cap = CappedWorkdir(probe / "lower", probe, 1)
        try:
            cap._mount_layers(os.geteuid())
        finally:
            clear_slot(probe)
    except OSError as exc:
        return False, f"cannot mount a capped overlay: {exc.strerror or exc}"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return True, "ok"
