"""Stand-in crates for the dependencies ``cargo test --tests`` never compiles.

Cargo resolves every dependency a manifest names before it builds anything: an optional one
that no default feature turns on, a dev-dependency only the benches use (criterion). Where
crates.io cannot be reached, ``cargo fetch`` then fails for a crate the tests do not need, and
the repo is lost. The fallback (``EnvPlan.fallback`` ``"stubs"``): each such crate is replaced,
through ``[patch.crates-io]``, by an empty crate of the version the lockfile pins (else the
least the requirement allows) and the features the manifest asks of it. It is taken only when
every registry dependency is one of them:

- an optional dependency that the ``default`` feature does not turn on (``dep:x``, ``x``,
  ``x/f``; ``x?/f`` does not);
- a dev- or normal dependency that no Rust file the test build compiles names (everything
  outside ``benches/`` and ``examples/``: ``cargo test --tests`` builds neither);

never a build-dependency of a crate with a build script, a git dependency, or one that a
compiled file names. The plan's ``pins`` list the stand-ins as ``name==version[feature,...]``,
and the replay scripts make the same crates in a temporary folder (``stub_lines``).
"""

from __future__ import annotations

import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

STUBS = "stubs"  # the plan's ``fallback``
_SECTIONS = ("dependencies", "dev-dependencies", "build-dependencies")
_SKIP_DIRS = {"target", ".git", "benches", "examples", "node_modules"}


@dataclass
class Stub:
    name: str  # the package name (a renamed dependency's ``package``)
    version: str
    features: set[str] = field(default_factory=set)
    why: str = field(default="", compare=False)

    def pin(self) -> str:
        return f"{self.name}=={self.version}[{','.join(sorted(self.features))}]"


def parse_pin(pin: str) -> Stub:
    m = re.fullmatch(r"(?P<name>[^=\[]+)==(?P<version>[^\[]+)\[(?P<features>[^\]]*)\]", pin)
    if m is None:
        raise ValueError(f"not a stand-in pin: {pin!r}")
    return Stub(m["name"], m["version"], {f for f in m["features"].split(",") if f})


def stand_ins(src: Path) -> tuple[list[Stub], list[str]]:
    """(the stand-ins, the registry dependencies the tests compile: why no fallback) of the
    repo's manifests (the root's and every workspace member's)."""
    root = _load(src / "Cargo.toml") or {}
    manifests = _members(src, root)
    shared = (root.get("workspace") or {}).get("dependencies") or {}
    locked = _locked(src / "Cargo.lock")
    stubs: dict[str, Stub] = {}
    needed: list[str] = []
    for manifest in manifests:
        data = _load(manifest)
        if data is None:
            continue
        folder = manifest.parent
        names_used = _names_used(folder)
        features = data.get("features") or {}
        enabled = _default_deps(features)
        for section, key, spec in _deps(data):
            if isinstance(spec, dict) and spec.get("workspace"):
                spec = {**_as_dict(shared.get(key, {})), **{k: v for k, v in spec.items() if k != "workspace"}}
            spec = _as_dict(spec)
            if "path" in spec:
                continue  # a crate of the repo's own
            name = spec.get("package", key)
            if "git" in spec:
                needed.append(f"{name} (a git dependency)")
                continue
            if spec.get("optional") and key not in enabled:
                why = "optional, off by default"
            elif section == "build-dependencies" and (folder / "build.rs").is_file():
                needed.append(f"{name} (the build script's)")
                continue
            elif key.replace("-", "_") in names_used:
                needed.append(f"{name} ({section}, named in the code the tests compile)")
                continue
            else:
                why = f"{section}, named by no file the tests compile"
            stub = stubs.setdefault(name, Stub(name, _version(name, str(spec.get("version", "*")), locked)))
            stub.features |= set(spec.get("features") or [])
            stub.features |= {f.split("/", 1)[1] for fs in features.values() for f in fs
                              if f.split("/", 1)[0].rstrip("?") == key and "/" in f}
            stub.why = stub.why or why
    return sorted(stubs.values(), key=lambda s: s.name), sorted(set(needed))


def write_stubs(stubs: list[Stub], folder: Path) -> str:
    """The stand-in crates under ``folder``; returns the ``[patch.crates-io]`` table naming them."""
    lines = ["[patch.crates-io]"]
    for s in stubs:
        crate = folder / s.name
        (crate / "src").mkdir(parents=True, exist_ok=True)
        (crate / "Cargo.toml").write_text(_manifest(s), encoding="utf-8")
        (crate / "src" / "lib.rs").write_text(_LIB, encoding="utf-8")
        lines.append(f'{_toml_key(s.name)} = {{ path = "{crate}" }}')
    return "\n".join(lines) + "\n"


def stub_lines(pins: list[str]) -> list[str]:
    """Replay: the same stand-ins in a temporary folder ``$ST`` and ``$ST/config.toml``, the
    ``--config`` file every cargo command of the script is given."""
    lines = ['ST="$(mktemp -d)" || exit 2', "trap 'rm -rf \"$ST\"' EXIT",
             "printf '[patch.crates-io]\\n' > \"$ST/config.toml\""]
    for pin in pins:
        s = parse_pin(pin)
        lines += [f'mkdir -p "$ST/{s.name}/src"',
                  f'printf %s {shlex.quote(_manifest(s))} > "$ST/{s.name}/Cargo.toml"',
                  f'printf %s {shlex.quote(_LIB)} > "$ST/{s.name}/src/lib.rs"',
                  f'printf \'%s = {{ path = "%s" }}\\n\' {shlex.quote(_toml_key(s.name))} "$ST/{s.name}" '
                  '>> "$ST/config.toml"']
    return lines


_LIB = "// datagen: a stand-in for a crate the tests never compile (crates.io was unreachable)\n"


def _manifest(s: Stub) -> str:
    feats = "".join(f"{_toml_key(f)} = []\n" for f in sorted(s.features - {"default"}))
    return f'[package]\nname = "{s.name}"\nversion = "{s.version}"\nedition = "2015"\n\n[features]\ndefault = []\n{feats}'


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else f'"{key}"'


def _members(src: Path, root: dict) -> list[Path]:
    """The root manifest and its workspace members' (not a fuzz or example crate of its own)."""
    found = [src / "Cargo.toml"]
    workspace = root.get("workspace") or {}
    excluded = {src / e for e in workspace.get("exclude", [])}
    for pattern in workspace.get("members", []):
        for folder in sorted(src.glob(pattern)):
            if (folder / "Cargo.toml").is_file() and folder != src and folder not in excluded:
                found.append(folder / "Cargo.toml")
    return found


def _load(path: Path) -> dict | None:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def _as_dict(spec) -> dict:
    return spec if isinstance(spec, dict) else {"version": str(spec)}


def _deps(data: dict):
    """(section, key, spec) of every dependency, target-specific ones included."""
    tables = [data, *((data.get("target") or {}).values())]
    for table in tables:
        for section in _SECTIONS:
            for key, spec in sorted((table.get(section) or {}).items()):
                yield section, key, spec
            # the old spelling
            for key, spec in sorted((table.get(section.replace("-", "_")) or {}).items()):
                yield section, key, spec


def _default_deps(features: dict) -> set[str]:
    """The dependency keys the ``default`` feature turns on, through the features it enables."""
    seen: set[str] = set()
    deps: set[str] = set()
    todo = ["default"]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for item in features.get(f, []):
            if item.startswith("dep:"):
                deps.add(item[4:])
            elif "/" in item:
                dep, _ = item.split("/", 1)
                if not dep.endswith("?"):
                    deps.add(dep)
                    todo.append(dep)
            elif item in features:
                todo.append(item)
            else:
                deps.add(item)  # an optional dependency's implicit feature
    return deps


def _names_used(folder: Path) -> set[str]:
    """The identifiers of the Rust files a ``cargo test --tests`` of the crate in ``folder``
    compiles (everything but benches and examples)."""
    words: set[str] = set()
    crates = {p.parent for p in folder.rglob("Cargo.toml")} - {folder}  # other crates (fuzz/): not this one's
    for path in folder.rglob("*.rs"):
        if _SKIP_DIRS & set(path.relative_to(folder).parts[:-1]) or crates & set(path.parents):
            continue
        try:
            words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return words


def _locked(path: Path) -> dict[str, list[str]]:
    """name -> the versions Cargo.lock pins from a registry."""
    data = _load(path) or {}
    out: dict[str, list[str]] = {}
    for p in data.get("package", []):
        if str(p.get("source", "")).startswith(("registry+", "sparse+")):
            out.setdefault(p["name"], []).append(p["version"])
    return out


def _version(name: str, requirement: str, locked: dict[str, list[str]]) -> str:
    """The lockfile's version of ``name`` that fits the requirement's first number (the lock
    must not change), else the least version the requirement allows."""
    least = _least(requirement)
    for v in sorted(locked.get(name, []), reverse=True):
        if least == "0.0.0" or v.split(".")[0] == least.split(".")[0] and (
                least.split(".")[0] != "0" or v.split(".")[1] == least.split(".")[1]):
            return v
    return least


def _least(requirement: str) -> str:
    first = requirement.split(",")[0].strip().lstrip("^~=>< ")
    nums = re.findall(r"\d+", first.split("-")[0])[:3]
    if not nums:
        return "0.0.0"
    return ".".join([*nums, *["0"] * (3 - len(nums))])
