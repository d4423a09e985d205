"""extract_tar on interpreters with and without tarfile's data filter (Debian 12's 3.11.2 has none)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from datagen.runtime.archive import extract_tar


def _tar(*members: tuple[str, bytes | None, str | None]) -> tarfile.TarFile:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return tarfile.open(fileobj=buf)


@pytest.fixture(params=["data filter", "no data filter"])
def interpreter(request, monkeypatch):
    if request.param == "no data filter":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    return request.param


def test_a_tree_unpacks_with_its_links(interpreter, tmp_path):
    extract_tar(_tar(("pkg/a.py", b"x = 1\n", None), ("pkg/b.py", None, "a.py")), tmp_path)
    assert (tmp_path / "pkg" / "a.py").read_text() == "x = 1\n"
    assert (tmp_path / "pkg" / "b.py").read_text() == "x = 1\n"


@pytest.mark.parametrize("member", [("../escape.py", b"x", None), ("/abs.py", b"x", None),
                                    ("pkg/up", None, "../../etc/passwd")])
def test_nothing_lands_outside_the_destination(interpreter, tmp_path, member):
    dest = tmp_path / "dest"
    dest.mkdir()
    try:  # refused, or (the data filter, for an absolute name) unpacked inside dest
        extract_tar(_tar(member), dest)
    except (ValueError, tarfile.TarError):
        pass
    assert not (tmp_path / "escape.py").exists() and not Path("/abs.py").exists()
    assert not (dest / "pkg" / "up").is_symlink()
