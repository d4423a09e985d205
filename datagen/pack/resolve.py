"""Map raw import specifiers to files of the same repository (best effort).

Each resolver returns ``(targets, status)``: the repo paths the import points at and
``"resolved"``, ``"unresolved"`` (it looks internal but no file matches: counted) or
``"external"`` (standard library, third-party package: ignored).
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable
from functools import cached_property

Result = tuple[list[str], str]
EXTERNAL: Result = ([], "external")
UNRESOLVED: Result = ([], "unresolved")

JS_EXTS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".json")
_JS_SWAP = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.M)
_CARGO_NAME = re.compile(r"^\[package\][^\[]*?^\s*name\s*=\s*\"([^\"]+)\"", re.M | re.S)


def _dir(path: str) -> str:
    """``posixpath.dirname`` without its generic-path overhead (hot in resolution)."""
    head = path[: path.rfind("/") + 1]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head


def _join(*parts: str) -> str:
    """Normalized join of the non-empty ``parts`` ("" when there are none)."""
    kept = [p for p in parts if p]
    if not kept:
        return ""
    joined = "/".join(kept)
    # already normal (no empty, "." or ".." component; no part that restarts at "/"):
    # what posixpath.join + normpath would return, without their cost (hot in resolution)
    if "//" not in joined and "/." not in joined and joined[0] != "." and joined[-1] != "/":
        return joined
    return posixpath.normpath(posixpath.join(*kept))


class RepoIndex:
    """Lookup tables over one repository's paths, shared by all resolvers."""

    def __init__(self, paths: Iterable[str], texts: dict[str, str] | None = None, repo: str = ""):
        self.paths = set(paths)
        self.repo = repo
        # manifest-like files (go.mod, Cargo.toml) when the caller has them
        self.texts = texts or {}
        self.by_dir: dict[str, list[str]] = defaultdict(list)
        for p in sorted(self.paths):
            self.by_dir[_dir(p)].append(p)
        self.java_classes: dict[str, str] = {}  # fully qualified class -> path
        self.java_packages: dict[str, list[str]] = defaultdict(list)
        self._py_cache: dict[tuple[str, str], str | None] = {}
        self._py_abs_cache: dict[tuple[str, str], str | None] = {}  # (importer dir, dotted)

    def exists(self, path: str) -> bool:
        return path in self.paths

    def first(self, candidates: Iterable[str]) -> str | None:
        for c in candidates:
            if c in self.paths:
                return c
        return None

    # ---- Python -------------------------------------------------------------------------
    @cached_property
    def py_roots(self) -> list[str]:
        """Repo root plus the parents of top-level packages (``src/`` layouts)."""
        roots = {""}
        for p in self.paths:
            if not p.endswith(("/__init__.py", "/__init__.pyi")) and p not in ("__init__.py",):
                continue
            d = _dir(p)
            while d and _join(_dir(d), "__init__.py") in self.paths:
                d = _dir(d)
            roots.add(_dir(d))
        return sorted(roots, key=lambda r: (r != "", r))

    def py_module(self, root: str, dotted: str) -> str | None:
        key = (root, dotted)
        if key not in self._py_cache:
            self._py_cache[key] = self._py_module(root, dotted)
        return self._py_cache[key]

    def _py_module(self, root: str, dotted: str) -> str | None:
        """``<base>.py``, ``<base>.pyi``, ``<base>/__init__.py`` or ``.pyi``, first found."""
        base = _join(root, dotted.replace(".", "/")) if dotted else root
        if dotted:
            hit = self.first((base + ".py", base + ".pyi"))
            if hit:
                return hit
        init = _join(base, "__init__.py")
        return self.first((init, init + "i"))

    @cached_property
    def py_root_package(self) -> str | None:
        """The import name of a repo whose root folder is itself a package (``__init__.py``
        at the top, e.g. a crawled site-packages folder): the repo's name."""
        if "__init__.py" not in self.paths or not self.repo:
            return None
        return posixpath.basename(self.repo).replace("-", "_")

    def py_absolute(self, importer: str, dotted: str) -> str | None:
        """The file of absolute module ``dotted`` seen from ``importer`` (memoized per folder)."""
        key = (_dir(importer), dotted)
        if key not in self._py_abs_cache:
            self._py_abs_cache[key] = self._py_absolute(key[0], dotted)
        return self._py_abs_cache[key]

    def _py_absolute(self, importer_dir: str, dotted: str) -> str | None:
        for root in self.py_roots:
            hit = self.py_module(root, dotted)
            if hit:
                return hit
        pkg = self.py_root_package
        if pkg and (dotted == pkg or dotted.startswith(pkg + ".")):
            hit = self.py_module("", dotted[len(pkg) + 1 :])
            if hit:
                return hit
        # a script importing a sibling module (its folder is on sys.path)
        return self.py_module(importer_dir, dotted)

    def resolve_python(self, importer: str, kind: str, value) -> Result:
        if kind == "module":
            hit = self.py_absolute(importer, value)
            return ([hit], "resolved") if hit else EXTERNAL
        module, names = value
        dots = len(module) - len(module.lstrip("."))
        rest = module[dots:]
        if dots:
            base = _dir(importer)
            for _ in range(dots - 1):
                base = _dir(base)
            targets = []
            for name in names or ("",):
                sub = ".".join(x for x in (rest, name) if x)
                hit = (name and self.py_module(base, sub)) or self.py_module(base, rest)
                if hit:
                    targets.append(hit)
            return (targets, "resolved") if targets else UNRESOLVED
        targets = []
        for name in names or ("",):
            hit = (name and self.py_absolute(importer, f"{rest}.{name}")) or self.py_absolute(
                importer, rest
            )
            if hit:
                targets.append(hit)
        return (targets, "resolved") if targets else EXTERNAL

    # ---- JavaScript / TypeScript -------------------------------------------------------
    def resolve_js(self, importer: str, spec: str) -> Result:
        spec = spec.split("?", 1)[0]
        if spec.startswith(("@/", "~/")):  # common path alias for the source folder
            bases = [_join("src", spec[2:]), _join(spec[2:])]
        elif spec.startswith(("./", "../")) or spec in (".", ".."):
            bases = [_join(_dir(importer), spec)]
        elif spec.startswith("/"):
            bases = [_join(spec.lstrip("/"))]
        else:
            return EXTERNAL
        for base in bases:
            if base.startswith(".."):
                continue
            stem, ext = posixpath.splitext(base)
            cands = [base] + [stem + e for e in _JS_SWAP.get(ext, ())]
            cands += [base + e for e in JS_EXTS] + [_join(base, "index" + e) for e in JS_EXTS]
            hit = self.first(cands)
            if hit:
                return [hit], "resolved"
        return UNRESOLVED if not spec.startswith(("@/", "~/")) else EXTERNAL

    # ---- Go ------------------------------------------------------------------------------
    @cached_property
    def go_modules(self) -> list[tuple[str, str]]:
        """(module path, module dir) from go.mod files, longest module path first."""
        mods = []
        for p, text in self.texts.items():
            if posixpath.basename(p) == "go.mod":
                m = _GO_MODULE.search(text)
                if m:
                    mods.append((m.group(1), _dir(p)))
        return sorted(mods, key=lambda m: (-len(m[0]), m))

    @cached_property
    def go_dirs(self) -> list[str]:
        return sorted({d for d, fs in self.by_dir.items() if any(f.endswith(".go") for f in fs)})

    def go_package(self, d: str) -> list[str]:
        files = self.by_dir.get(d, [])
        return [f for f in files if f.endswith(".go") and not f.endswith("_test.go")]

    def resolve_go(self, importer: str, path: str) -> Result:
        for module, mdir in self.go_modules:
            if path == module or path.startswith(module + "/"):
                files = self.go_package(_join(mdir, path[len(module) + 1 :]))
                return (files, "resolved") if files else UNRESOLVED
        if self.go_modules:
            return EXTERNAL
        # no go.mod at hand: match the longest repo folder that the import path ends with
        best = None
        for d in self.go_dirs:
            if d and (path == d or path.endswith("/" + d)) and (best is None or len(d) > len(best)):
                best = d
        return (self.go_package(best), "resolved") if best else EXTERNAL

    # ---- Rust ----------------------------------------------------------------------------
    def rust_crate_root(self, path: str) -> str | None:
        """Folder of the crate root file (lib.rs / main.rs) that owns ``path``."""
        d = _dir(path)
        while True:
            if _join(d, "lib.rs") in self.paths or _join(d, "main.rs") in self.paths:
                return d
            if not d:
                return None
            d = _dir(d)

    @cached_property
    def rust_crates(self) -> dict[str, str]:
        """Workspace crate name (``-`` as ``_``) -> crate root folder."""
        crates: dict[str, str] = {}
        for p in sorted(self.paths):
            if posixpath.basename(p) in ("lib.rs", "main.rs"):
                root = _dir(p)
                top = _dir(root) if posixpath.basename(root) == "src" else root
                name = posixpath.basename(top)
                cargo = self.texts.get(_join(top, "Cargo.toml"))
                m = _CARGO_NAME.search(cargo) if cargo else None
                if m:
                    name = m.group(1)
                if name:
                    crates.setdefault(name.replace("-", "_"), root)
        return crates

    def rust_module_of(self, path: str, root: str) -> list[str]:
        rel = posixpath.relpath(path, root) if root else path
        parts = rel[: -len(".rs")].split("/")
        if parts[-1] in ("mod", "lib", "main") and (parts[-1] == "mod" or len(parts) == 1):
            parts = parts[:-1]
        return parts

    def rust_child_dir(self, path: str) -> str:
        """Folder where ``mod x;`` declared in ``path`` looks for ``x.rs``."""
        name = posixpath.basename(path)
        if name in ("lib.rs", "main.rs", "mod.rs"):
            return _dir(path)
        return path[: -len(".rs")]

    def rust_file(self, root: str, segments: list[str]) -> str | None:
        """File of the longest module prefix of ``segments`` (never the crate root file)."""
        for k in range(len(segments), 0, -1):
            base = _join(root, *segments[:k])
            hit = self.first([base + ".rs", _join(base, "mod.rs")])
            if hit:
                return hit
        return None

    def resolve_rust(self, importer: str, kind: str, value) -> Result:
        if kind == "mod":
            base = _join(self.rust_child_dir(importer), value)
            hit = self.first([base + ".rs", _join(base, "mod.rs")])
            return ([hit], "resolved") if hit else UNRESOLVED
        if kind == "crate":
            root = self.rust_crates.get(value)
            hit = root is not None and self.first([_join(root, "lib.rs"), _join(root, "main.rs")])
            return ([hit], "resolved") if hit else EXTERNAL
        segs = list(value)
        root = self.rust_crate_root(importer)
        head = segs[0]
        if root is None and head not in self.rust_crates:  # e.g. tests/, examples/ use the lib
            return EXTERNAL
        if head in ("crate", "self", "super") and root is not None:
            module = [] if head == "crate" else self.rust_module_of(importer, root)
            segs = segs[1:]
            if head == "super":
                module = module[:-1]
            while segs and segs[0] == "super":
                module, segs = module[:-1], segs[1:]
            hit = self.rust_file(root, module + segs)
            # no module file: the item lives in the crate root file (edge left out: the
            # root declares the modules, so it comes last)
            return ([hit], "resolved") if hit and hit != importer else ([], "resolved")
        if head in self.rust_crates and head != "std":
            other = self.rust_crates[head]
            hit = self.rust_file(other, segs[1:]) or self.first(
                [_join(other, "lib.rs"), _join(other, "main.rs")]
            )
            return ([hit], "resolved") if hit and hit != importer else ([], "resolved")
        if root is None:
            return EXTERNAL
        # 2018 edition: `use foo::x` where `foo` is a child module of the current one
        module = self.rust_module_of(importer, root)
        hit = self.rust_file(root, module + segs)
        return ([hit], "resolved") if hit and hit != importer else EXTERNAL

    # ---- Java ----------------------------------------------------------------------------
    def add_java(self, path: str, package: str | None) -> None:
        cls = posixpath.basename(path)[: -len(".java")]
        fq = f"{package}.{cls}" if package else cls
        self.java_classes.setdefault(fq, path)
        self.java_packages[package or ""].append(path)

    def resolve_java(self, importer: str, name: str) -> Result:
        if name.endswith(".*"):
            pkg = name[:-2]
            files = [p for p in self.java_packages.get(pkg, []) if p != importer]
            if files:
                return sorted(files), "resolved"
            hit = self.java_classes.get(pkg)  # `import a.B.*` (nested classes of B)
            if hit:
                return [hit], "resolved"
        else:
            parts = name.split(".")
            for k in range(len(parts), 0, -1):  # static imports / nested classes: shorten
                hit = self.java_classes.get(".".join(parts[:k]))
                if hit:
                    return [hit], "resolved"
        internal = any(name.startswith(pkg + ".") for pkg in self.java_packages if pkg)
        return UNRESOLVED if internal else EXTERNAL

    # ---- C / C++ -------------------------------------------------------------------------
    @cached_property
    def include_dirs(self) -> list[str]:
        dirs = {""}
        for d in self.by_dir:
            parts = d.split("/")
            for i, part in enumerate(parts):
                if part in ("include", "inc", "src"):
                    dirs.add("/".join(parts[: i + 1]))
        return sorted(dirs, key=lambda d: (d.count("/"), d))

    @cached_property
    def by_basename(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for p in sorted(self.paths):
            out[posixpath.basename(p)].append(p)
        return out

    def resolve_c(self, importer: str, kind: str, spec: str) -> Result:
        if kind == "local":
            hit = self.first([_join(_dir(importer), spec)])
            if hit:
                return [hit], "resolved"
        hit = self.first(_join(d, spec) for d in self.include_dirs)
        if hit:
            return [hit], "resolved"
        if kind == "system":
            return EXTERNAL
        # last resort: a unique-ish file whose path ends with the spec; prefer the closest
        matches = [p for p in self.by_basename.get(posixpath.basename(spec), [])
                   if p == spec or p.endswith("/" + spec.lstrip("./"))]
        if matches:
            imp_dir = _dir(importer)

            def closeness(p: str) -> tuple[int, int, str]:
                shared = len(posixpath.commonpath([p, imp_dir])) if imp_dir else 0
                return (-shared, len(p), p)

            best = min(matches, key=closeness)
            return [best], "resolved"
        return UNRESOLVED
