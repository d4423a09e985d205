"""``npm ci`` past a pinned package the registry no longer serves, where the tests do not load it.

The fixture is a small package written for this test: its lock file pins two dev dependencies,
``wordstat`` (a ``file:`` tarball in the repo, which its tests load) and ``eslint-config-walls``,
whose ``resolved`` URL points to an HTTP server on 127.0.0.1 that this test runs and that
answers 404 to everything, as a registry that dropped a tarball does. ``npm ci`` fails there; the
env is installed without that package (every other entry of the lock as it is), the plan and the
task's setup script say so, and a task validates and replays. Where the tests load the missing
package, the env fails with npm's own words."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.envs.cache import EnvSetupError
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env, run_profile
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from tests import tools
from tests.sandbox.test_profiles_replay_more import _write, replay_validated

pytestmark = tools.needs("node", "npm")
TESTS = ("const test = require('node:test');\nconst assert = require('node:assert');\n"
         "const { mean } = require('wordstat');\nconst { longest } = require('../index');\n\n"
         "test('finds the longest word', () => {\n  assert.strictEqual(longest(['a', 'abc', 'ab']), 'abc');\n});\n\n"
         "test('keeps the first of equals', () => {\n  assert.strictEqual(longest(['ab', 'cd']), 'ab');\n});\n\n"
         "test('averages word lengths', () => {\n  assert.strictEqual(mean(['ab', 'abcd']), 3);\n});\n")
INDEX = ("function longest(words) {\n  let best = '';\n  for (const w of words) {\n"
         "    if (w.length > best.length) best = w;\n  }\n  return best;\n}\n\nmodule.exports = { longest };\n")


class _Gone(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(404)
        self.end_headers()
        self.wfile.write(b"Not Found")

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def gone_registry() -> Iterator[str]:
    """The base URL of an HTTP server that serves nothing (404)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Gone)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()


def _tarball(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{name}")
            info.size, info.mtime = len(data), 0
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def write_package(root: Path, registry: str, tests: str = TESTS) -> Path:
    """The fixture package, its lock file pinning the gone tarball at ``registry``."""
    stat = _tarball({"package.json": '{"name": "wordstat", "version": "1.0.0", "main": "index.js"}\n',
                     "index.js": "exports.mean = (ws) => ws.reduce((n, w) => n + w.length, 0) / ws.length;\n"})
    (root / "tarballs").mkdir(parents=True)
    (root / "tarballs" / "wordstat-1.0.0.tgz").write_bytes(stat)
    dev = {"eslint-config-walls": "1.0.0", "wordstat": "file:tarballs/wordstat-1.0.0.tgz"}
    pkg = {"name": "longword", "version": "1.0.0", "scripts": {"test": "node --test", "lint": "eslint ."},
           "devDependencies": dev}
    lock = {"name": "longword", "version": "1.0.0", "lockfileVersion": 3, "requires": True, "packages": {
        "": {"name": "longword", "version": "1.0.0", "devDependencies": dev},
        "node_modules/eslint-config-walls": {
            "version": "1.0.0", "resolved": f"{registry}/eslint-config-walls/-/eslint-config-walls-1.0.0.tgz",
            "integrity": _integrity(b"a tarball nobody serves any more"), "dev": True},
        "node_modules/wordstat": {"version": "1.0.0", "resolved": "file:tarballs/wordstat-1.0.0.tgz",
                                  "integrity": _integrity(stat), "dev": True}}}
    files = {"package.json": json.dumps(pkg, indent=2) + "\n", "package-lock.json": json.dumps(lock, indent=2) + "\n",
             "index.js": INDEX, "test/longest.test.js": tests, ".eslintrc.json": '{"extends": "walls"}\n'}
    return _write(root, files)


def _sandbox():
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    return untrusted_sandbox("auto"), SandboxLimits(timeout_s=180)


@pytest.mark.slow
def test_the_env_is_installed_without_a_gone_package_the_tests_do_not_load(tmp_path, gone_registry):
    src = write_package(tmp_path / "longword", gone_registry)
    before = {n: (src / n).read_text() for n in ("package.json", "package-lock.json")}
    sandbox, limits = _sandbox()
    profile = get_profile("node")
    env = ensure_env(profile, src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    assert env.plan.fallback == "without eslint-config-walls"
    assert any("404 Not Found - GET" in note and "eslint-config-walls" in note for note in env.plan.notes)
    assert (env.path / "node_modules" / "wordstat").is_dir()
    assert not (env.path / "node_modules" / "eslint-config-walls").exists()
    assert {n: (src / n).read_text() for n in before} == before  # the repo's own files untouched
    work = tmp_path / "work"
    shutil.copytree(src, work)
    run = run_profile(profile, env, sandbox, work, limits)
    assert set(run.results.values()) == {"pass"} and len(run.results) == 3, run.run.stdout[-2000:]
    setup = profile.setup_script(env.plan)
    assert "node .datagen-npm-without.js eslint-config-walls && sh -c" in setup
    # a later build of the same plan reuses the env and says the same
    again = ensure_env(profile, src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    assert again.plan.fallback == env.plan.fallback and again.path == env.path


@pytest.mark.slow
def test_a_gone_package_the_tests_load_fails_the_env_with_npms_words(tmp_path, gone_registry):
    tests = TESTS.replace("require('wordstat');", "require('wordstat');\nrequire('eslint-config-walls');")
    src = write_package(tmp_path / "longword", gone_registry, tests)
    sandbox, limits = _sandbox()
    with pytest.raises(EnvSetupError) as failed:
        ensure_env(get_profile("node"), src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    assert "404" in failed.value.log_tail and "the test run loads eslint-config-walls" in failed.value.log_tail


@pytest.mark.slow
def test_a_task_validates_and_replays_without_the_gone_package(tmp_path, gone_registry):
    src = write_package(tmp_path / "fixture" / "longword", gone_registry)
    bug = ("index.js", "if (w.length > best.length)", "if (w.length >= best.length)")
    task = replay_validated(tmp_path, "node", src, bug, set())
    assert [t.rsplit(" > ", 1)[-1] for t in task.FAIL_TO_PASS] == ["keeps the first of equals"]
    assert "installed without it" in task.setup_script


NPM_SAYS = [  # npm 10, npm 6 and a missing file: tarball, each naming the package it could not fetch
    ("npm error code E404\nnpm error 404 Not Found - GET {r}/eslint-config-walls/-/eslint-config-walls-1.0.0.tgz\n"
     "npm error 404  The requested resource 'eslint-config-walls@{r}/eslint-config-walls/-/x.tgz' could not be "
     "found or you do not have permission to access it.\n", ["eslint-config-walls"]),
    ("npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.example/@walls%2fpreset - Not found\n"
     "npm ERR! 404  '@walls/preset@2.0.1' is not in the npm registry.\n", ["@walls/preset"]),
    ("npm error enoent ENOENT: no such file or directory, open '/x/work/tarballs/wordstat-1.0.0.tgz'\n",
     ["wordstat"]),
    ("npm error code ERESOLVE\nnpm error ERESOLVE could not resolve\n", []),
    # a git dependency whose host is unreachable; the old lockfile's other warning is not fatal
    ("npm warn old lockfile Could not fetch metadata for left-pad-ish@1.2.9 Error: No matching version\n"
     "npm warn old lockfile Could not fetch metadata for zuul-walls@git+ssh://git@git.example/o/zuul-walls.git#"
     "182cb44 FetchError: request to https://codeload.git.example/o/zuul-walls/tar.gz/182cb44 failed, reason: "
     "getaddrinfo ENOTFOUND codeload.git.example\nnpm error code ENOTFOUND\n"
     "npm error network request to https://codeload.git.example/o/zuul-walls/tar.gz/182cb44 failed, reason: "
     "getaddrinfo ENOTFOUND codeload.git.example\n", ["zuul-walls"]),
    # an install script that downloads a browser (npm rebuild), nested and scoped paths
    ("npm error code 1\nnpm error path /w/work/node_modules/@walls/browser/node_modules/fetcher\n"
     "npm error command failed\nnpm error command sh -c node install.js\n"
     "npm error ERROR: Failed to download Chromium\n", ["@walls/browser"]),
]


@pytest.mark.parametrize(("output", "names"), NPM_SAYS)
def test_the_packages_npm_could_not_fetch_are_read_from_its_output(tmp_path, output, names):
    from datagen.sandbox.harness.profiles._npm import failed_packages

    src = write_package(tmp_path, "http://127.0.0.1:9")
    assert failed_packages(output.replace("{r}", "http://127.0.0.1:9"), src) == names
