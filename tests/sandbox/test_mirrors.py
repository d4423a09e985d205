"""``env.mirrors`` reach the installers, and a setup that cannot reach a registry says so.

A real PyPI-style index on 127.0.0.1 (a wheel made here, served by ``http.server``) is the
only index a Python env sees when ``env.mirrors.pypi`` names it; cargo's source replacement
is written into the env's CARGO_HOME and used by ``cargo fetch`` (a mirror whose name does
not resolve: ``registry_unreachable: <host>``); the installers' own words for an
unreachable host name the registry."""

from __future__ import annotations

import base64
import hashlib
import http.server
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, MirrorsConfig, SandboxLimits
from datagen.sandbox.envs.cache import EnvSetupError
from datagen.sandbox.envs.mirrors import mirror_env, unreachable_registry
from datagen.sandbox.envs.python.manager import EnvManager
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from tests import tools

LIMITS = SandboxLimits(timeout_s=300, memory_mb=4096, processes=256)


@pytest.fixture
def sandbox():
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    return untrusted_sandbox("auto")


def _wheel(folder: Path) -> Path:
    """A pure wheel of ``mirrored-pkg`` 1.0, with a valid RECORD."""
    files = {"mirrored_pkg/__init__.py": b"ANSWER = 42\n",
             "mirrored_pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: mirrored-pkg\nVersion: 1.0\n",
             "mirrored_pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                 b"Tag: py3-none-any\n"}
    record = "".join(f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\n" for name, data in files.items()) + "mirrored_pkg-1.0.dist-info/RECORD,,\n"
    path = folder / "mirrored_pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr("mirrored_pkg-1.0.dist-info/RECORD", record)
    return path


@pytest.fixture
def index(tmp_path):
    """A simple index on 127.0.0.1 holding only mirrored-pkg; yields (url, requested paths)."""
    root = tmp_path / "index"
    (root / "simple" / "mirrored-pkg").mkdir(parents=True)
    wheel = _wheel(root)
    (root / "simple" / "mirrored-pkg" / "index.html").write_text(
        f'<html><body><a href="/{wheel.name}">{wheel.name}</a></body></html>\n')
    seen: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(root), **k)

        def log_message(self, *args):
            seen.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple/", seen
    server.shutdown()


def test_a_python_env_installs_from_the_recipes_index(tmp_path, sandbox, index):
    url, seen = index
    src = tmp_path / "repo"
    (src / "tests").mkdir(parents=True)
    (src / "requirements.txt").write_text("mirrored-pkg==1.0\n")
    (src / "tests" / "test_a.py").write_text("import mirrored_pkg\n\n\ndef test_a():\n"
                                             "    assert mirrored_pkg.ANSWER == 42\n")
    config = EnvConfig(cache_dir=str(tmp_path / "envs"), test_requirements=[], python=sys.executable,
                       mirrors=MirrorsConfig(pypi=url))
    env = EnvManager(config, sandbox, LIMITS).ensure(src)
    assert any(p.startswith("/simple/mirrored-pkg") for p in seen), seen
    assert list(Path(env.path).glob("venv/lib/python*/site-packages/mirrored_pkg/__init__.py"))
    # the same plan without the mirror is another env (the key holds the mirrors)
    assert EnvManager(config.model_copy(update={"mirrors": MirrorsConfig()}), sandbox, LIMITS).key(src) != \
        EnvManager(config, sandbox, LIMITS).key(src)


@tools.needs("cargo")
def test_cargo_fetch_goes_to_the_mirror_and_an_unreachable_one_is_said_plainly(tmp_path, sandbox):
    src = tmp_path / "crate"
    (src / "src").mkdir(parents=True)
    (src / "Cargo.toml").write_text('[package]\nname = "uses-itoa"\nversion = "0.1.0"\nedition = "2021"\n\n'
                                    '[dev-dependencies]\nitoa = "1"\n')
    (src / "src" / "lib.rs").write_text("pub fn one() -> i32 {\n    1\n}\n")
    # a test that uses the dev-dependency: no stand-in can take its place (``_cargo_stubs``)
    (src / "tests").mkdir()
    (src / "tests" / "fmt.rs").write_text("#[test]\nfn formats() {\n    assert_eq!(itoa::Buffer::new().format(1), \"1\");\n}\n")
    config = EnvConfig(cache_dir=str(tmp_path / "envs"),
                       mirrors=MirrorsConfig(cargo="sparse+https://crates.mirror.invalid/index/"))
    with pytest.raises(EnvSetupError) as err:
        ensure_env(get_profile("cargo"), src, config, sandbox, LIMITS)
    assert err.value.reason == "registry_unreachable: crates.mirror.invalid"
    home = next((tmp_path / "envs").glob("cargo-*/cargo-home"))
    assert 'replace-with = "datagen-mirror"' in (home / "config.toml").read_text()


@pytest.mark.parametrize(("output", "registry"), [
    ("Caused by:\n  failed to download from `https://index.crates.io/config.json`\n\nCaused by:\n"
     "  [6] Could not resolve hostname (Could not resolve host: index.crates.io)", "crates.io"),
    ('go: github.com/google/uuid@v1.6.0: Get "https://proxy.golang.org/github.com/google/uuid/@v/v1.6.0.mod": '
     "dial tcp: lookup proxy.golang.org on 10.255.255.53:53: no such host", "proxy.golang.org"),
    ("[ERROR] Failed to execute goal: Could not transfer artifact junit:junit:pom:4.13 from/to central "
     "(https://repo.maven.apache.org/maven2): Unknown host repo.maven.apache.org", "Maven Central"),
    ("npm error code ENOTFOUND\nnpm error network request to https://registry.npmjs.org/x failed, reason: "
     "getaddrinfo ENOTFOUND registry.npmjs.org", "npm registry"),
    ("error: Request failed after 3 retries\n  cause: Failed to fetch: https://pypi.org/simple/six/\n"
     "  cause: dns error\n  cause: failed to lookup address information: Name or service not known", "PyPI"),
    ("ERROR: No matching distribution found for nosuchpkg==9", None),
])
def test_an_unreachable_registry_is_named_from_the_installers_words(output, registry):
    assert unreachable_registry(output) == registry


def test_mirror_variables_for_each_installer():
    env = mirror_env(MirrorsConfig(pypi="https://pypi.example/simple", npm="https://npm.example/",
                                   goproxy="https://goproxy.example", gosumdb="off"))
    assert env["UV_DEFAULT_INDEX"] == env["PIP_INDEX_URL"] == "https://pypi.example/simple"
    assert env["npm_config_registry"] == "https://npm.example/" and env["COREPACK_NPM_REGISTRY"] == "https://npm.example"
    assert env["GOPROXY"] == "https://goproxy.example" and env["GOSUMDB"] == "off"
    assert mirror_env(MirrorsConfig()) == {}
