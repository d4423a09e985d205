"""Unpacking a tar that datagen made (a ``git archive`` of a task, a Harbor ``source.tar``)."""

from __future__ import annotations

import posixpath
import tarfile
from pathlib import Path


def extract_tar(tar: tarfile.TarFile, dest: Path | str) -> None:
    """Unpack ``tar`` under ``dest`` and nowhere else.

    Python's ``data`` filter does that where the interpreter has it (3.12, and 3.11.4 on);
    older 3.11 releases, such as Debian 12's 3.11.2, refuse the argument, so there every member's
    name and link target are checked first: nothing absolute, nothing that climbs out, no
    device or hard link."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    for member in tar.getmembers():
        names = [member.name] + ([posixpath.join(posixpath.dirname(member.name), member.linkname)]
                                 if member.issym() else [])
        for name in names:
            norm = posixpath.normpath(name)
            if name.startswith("/") or norm == ".." or norm.startswith("../"):
                raise ValueError(f"{member.name}: {name} is outside the destination")
        if not (member.isfile() or member.isdir() or member.issym()):
            raise ValueError(f"{member.name}: not a file, folder or symbolic link")
    tar.extractall(dest)  # noqa: S202 - every member checked above
