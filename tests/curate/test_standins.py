"""Snapshot redaction keeps packaging metadata valid: redacted projects still build."""

from __future__ import annotations

import ipaddress
import subprocess
import sys
from pathlib import Path

import pytest

from datagen.curate.secrets import SecretPack, redact_file_text
from datagen.curate.standins import email_standin, ip_standin, shaped_standin

PYPROJECT = '''[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "tinypkg"
version = "1.0"
authors = [{name = "Jane Doe", email = "jane.doe@corp-mail.io"}]
maintainers = [{name = "Bob", email = "bob+pkg@uni.edu"}]

[tool.hatch.build.targets.wheel]
packages = ["tinypkg"]
'''
SETUP_CFG = '''[metadata]
name = tinycfg
version = 1.0
author = Jane Doe
author_email = jane.doe@corp-mail.io
maintainer_email = ops@build.corp-mail.io
url = http://203.0.113.77/tinycfg

[options]
packages = tinycfg
'''
SETUP_PY = '''from setuptools import setup

setup(name="tinypy", version="1.0", author_email="carol@startup.dev", packages=["tinypy"],
      url="https://github.com/carol/tinypy")
'''
TOKEN_PY = 'GITHUB = "ghp_' + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6" + '"\nHOST = "52.14.201.9"\n'


@pytest.fixture(scope="module")
def pack() -> SecretPack:
    return SecretPack.load()


def _build(project: Path, out: Path) -> list[Path]:
    """A real wheel of ``project`` by pip with the venv's backends (no network needed)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out), str(project)], check=True, capture_output=True, text=True, timeout=120)
    return sorted(out.glob("*.whl"))


@pytest.mark.parametrize("name, files", [
    ("tinypkg", {"pyproject.toml": PYPROJECT}),
    ("tinycfg", {"setup.cfg": SETUP_CFG, "setup.py": "from setuptools import setup\nsetup()\n"}),
    ("tinypy", {"setup.py": SETUP_PY}),
])
def test_redacted_metadata_still_builds(pack, tmp_path, name, files):
    project = tmp_path / "p"
    (project / name).mkdir(parents=True)
    (project / name / "__init__.py").write_text(TOKEN_PY)
    for path, text in {**files, f"{name}/__init__.py": TOKEN_PY}.items():
        clean, counts = redact_file_text(pack, path, text, redact_pii=True)
        if "@" in text:
            assert "@example.com" in clean and counts["email"]
        assert "<EMAIL>" not in clean and "corp-mail.io" not in clean and "carol@startup.dev" not in clean
        (project / path).write_text(clean)
    init = (project / name / "__init__.py").read_text()
    assert "aB3dE6gH9jK2" not in init and "52.14.201.9" not in init
    wheels = _build(project, tmp_path / "dist")
    assert [w.name.split("-")[0] for w in wheels] == [name]
    meta = subprocess.run([sys.executable, "-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); "
                           "print(next(z.read(n).decode() for n in z.namelist() if n.endswith('METADATA')))",
                           str(wheels[0])], capture_output=True, text=True, check=True).stdout
    assert "example.com" in meta and "corp-mail.io" not in meta and "startup.dev" not in meta


def test_pii_kept_in_metadata_when_asked(pack):
    kept, counts = redact_file_text(pack, "pyproject.toml", PYPROJECT, redact_pii=False)
    assert "jane.doe@corp-mail.io" in kept and not counts
    code, counts = redact_file_text(pack, "pkg/mod.py", 'ADMIN = "jane.doe@corp-mail.io"\n', redact_pii=False)
    assert "corp-mail.io" not in code and counts["email"] == 1
    # secrets go even from metadata
    text, counts = redact_file_text(pack, "setup.cfg", "[x]\ntoken = " + TOKEN_PY.split("= ")[1], redact_pii=False)
    assert "aB3dE6gH9jK2" not in text and counts


def test_standins_are_same_kind_and_deterministic():
    e = email_standin("Jane.Doe@corp-mail.io")
    assert e == email_standin("jane.doe@CORP-mail.io") and e.endswith("@example.com") and e.startswith("jane-")
    assert email_standin("x@a.io") != email_standin("y@a.io")
    v4 = ipaddress.ip_address(ip_standin("52.14.201.9"))
    assert any(v4 in ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"))
    assert ipaddress.ip_address(ip_standin("2606:4700::6810:85e5")) in ipaddress.ip_network("2001:db8::/32")
    token = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    dummy = shaped_standin("github_token", token)
    assert dummy != token and dummy.startswith("ghp_") and len(dummy) == len(token)
    assert [c.isdigit() for c in dummy] == [c.isdigit() for c in token]
    assert dummy == shaped_standin("github_token", token)


def test_compressed_test_fixtures_are_not_taken_for_secrets(pack, tmp_path):
    """Base64 of gzip / zip data in a test's JSON fixture (python-dateutil ships its zoneinfo
    files so) is data, not a key: rewriting it broke 400 of that suite's tests. A real
    high-entropy value beside it still goes."""
    import base64
    import gzip
    import json
    import zipfile

    zipped = tmp_path / "a.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("f.txt", "zoneinfo " * 20)
    blobs = {"Africa/Abidjan": base64.b64encode(gzip.compress(b"TZif2" + bytes(range(40)), mtime=0)).decode(),
             "archive": base64.b64encode(zipped.read_bytes()[:60]).decode()}
    fixture = json.dumps(blobs, indent=4)
    kept, counts = redact_file_text(pack, "tests/resources/data/zoneinfo_v1.json", fixture, redact_pii=True)
    assert kept == fixture and not counts
    secret = '{"client": "q8Zr2LmX0vT7pWc4Ns9Kd1Yh5Gb3Jf6R"}'
    text, counts = redact_file_text(pack, "tests/resources/data/config.json", secret, redact_pii=True)
    assert "q8Zr2LmX0vT7pWc4Ns9Kd1Yh5Gb3Jf6R" not in text and counts["high_entropy_secret"] == 1
