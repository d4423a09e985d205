"""Import graphs and dependency order for each supported language."""

from __future__ import annotations

import pytest

from datagen.pack.extract import extract_imports, import_prefix
from datagen.pack.imports import dependency_order, import_graph, order_repo


def files_of(lang: str, tree: dict[str, str]) -> list[dict]:
    from datagen.pack.extract import SUPPORTED

    out = []
    for path, text in tree.items():
        ext_lang = lang
        if path.endswith((".h",)) and lang == "cpp":
            ext_lang = "c"
        ext_lang = ext_lang if ext_lang in SUPPORTED else "toml"
        out.append({"path": path, "lang": ext_lang, "text": text})
    return out


def before(order: list[str], first: str, then: str) -> bool:
    return order.index(first) < order.index(then)


PY = {
    "app/main.py": "from app import util\nfrom .models import User\n"
    "import app.zeta as z\nimport os\n",
    "app/__init__.py": "",
    "app/util.py": "from . import models\n",
    "app/models.py": "from ..shared.base import Base\n",
    "app/zeta.py": "x = 1\n",
    "shared/__init__.py": "",
    "shared/base.py": "import json\nfrom shared.missing import nothing\n",
    "src/pkg/__init__.py": "",
    "src/pkg/a.py": "from pkg.b import f\n",
    "src/pkg/b.py": "def f(): pass\n",
    "scripts/run.py": "import helper\n",
    "scripts/helper.py": "",
}


def test_python_absolute_relative_src_layout_and_scripts():
    deps, counts = import_graph(files_of("python", PY))
    assert deps["app/main.py"] == ["app/models.py", "app/util.py", "app/zeta.py"]
    assert deps["app/util.py"] == ["app/models.py"]
    assert deps["app/models.py"] == ["shared/base.py"]
    assert deps["src/pkg/a.py"] == ["src/pkg/b.py"]
    assert deps["scripts/run.py"] == ["scripts/helper.py"]
    order = order_repo(files_of("python", PY)).order
    assert sorted(order) == sorted(PY)
    for src, dsts in deps.items():
        for dst in dsts:
            assert before(order, dst, src), (dst, src, order)
    assert counts["external"] >= 2  # os, json (and shared.missing: not internal-looking)


def test_relative_import_that_misses_is_unresolved():
    tree = {"p/__init__.py": "", "p/a.py": "from .nope import x\nfrom . import b\n", "p/b.py": ""}
    result = order_repo(files_of("python", tree))
    assert result.unresolved == 1
    assert ("p/a.py", "p/b.py") in result.edges


JS = {
    "src/index.ts": "import { a } from './lib/a';\nexport * from './lib';\n"
    "import x from 'react';\n",
    "src/lib/index.ts": "export const z = 1;\n",
    "src/lib/a.ts": "import b = require('../b');\nimport c from './c.js';\n",
    "src/b.tsx": "export default () => <div/>;\n",
    "src/lib/c.ts": "const m = await import('../../web/m.mjs');\n",
    "web/m.mjs": "const q = require('./q');\nimport('./missing');\n",
    "web/q.js": "module.exports = 1;\n",
}


def test_js_ts_extension_index_and_require_resolution():
    ts = files_of("typescript", {k: v for k, v in JS.items() if "web/" not in k})
    js = files_of("javascript", {k: v for k, v in JS.items() if "web/" in k})
    deps, counts = import_graph(ts + js)
    assert deps["src/index.ts"] == ["src/lib/a.ts", "src/lib/index.ts"]
    assert deps["src/lib/a.ts"] == ["src/b.tsx", "src/lib/c.ts"]
    assert deps["src/lib/c.ts"] == ["web/m.mjs"]
    assert deps["web/m.mjs"] == ["web/q.js"]
    assert counts["unresolved"] == 1 and counts["external"] == 1


GO = {
    "go.mod": "module example.com/tool\n\ngo 1.22\n",
    "main.go": 'package main\nimport (\n "fmt"\n "example.com/tool/internal/store"\n)\n',
    "internal/store/store.go": 'package store\nimport "example.com/tool/internal/util"\n',
    "internal/store/store_test.go": "package store\n",
    "internal/util/util.go": "package util\n",
    "internal/util/more.go": 'package util\nimport "example.com/tool/gone"\n',
}


def test_go_module_path_to_package_directory():
    result = order_repo(files_of("go", GO))
    deps, _ = import_graph(files_of("go", GO))
    assert deps["main.go"] == ["internal/store/store.go"]
    assert deps["internal/store/store.go"] == ["internal/util/more.go", "internal/util/util.go"]
    assert result.unresolved == 1 and result.external == 1
    assert before(result.order, "internal/util/util.go", "internal/store/store.go")
    assert before(result.order, "internal/store/store.go", "main.go")


def test_go_without_go_mod_matches_folder_suffix():
    tree = {k: v for k, v in GO.items() if k != "go.mod"}
    deps, _ = import_graph(files_of("go", tree))
    assert deps["main.go"] == ["internal/store/store.go"]


RUST = {
    "Cargo.toml": '[package]\nname = "my-crate"\n',
    "src/lib.rs": "pub mod parser;\nmod util;\npub use crate::parser::Parser;\n",
    "src/parser/mod.rs": "mod lexer;\nuse super::util::{helper, Other as O};\nuse crate::Thing;\n",
    "src/parser/lexer.rs": "use crate::util::*;\nuse std::io;\n",
    "src/util.rs": "pub fn helper() {}\n",
    "src/main.rs": "use my_crate::parser::Parser;\nmod nothere;\n",
    "tests/it.rs": "use my_crate::Thing;\nuse serde::Deserialize;\n",
}


def test_rust_mod_and_use_paths():
    deps, counts = import_graph(files_of("rust", RUST))
    assert deps["src/lib.rs"] == ["src/parser/mod.rs", "src/util.rs"]
    assert deps["src/parser/mod.rs"] == ["src/parser/lexer.rs", "src/util.rs"]
    assert deps["src/parser/lexer.rs"] == ["src/util.rs"]
    assert deps["src/main.rs"] == ["src/parser/mod.rs"]
    assert deps["tests/it.rs"] == ["src/lib.rs"]  # integration tests use the lib by crate name
    assert counts["unresolved"] == 1  # mod nothere;
    order = order_repo(files_of("rust", RUST)).order
    assert before(order, "src/util.rs", "src/parser/lexer.rs")
    assert before(order, "src/parser/mod.rs", "src/lib.rs")


JAVA = {
    "src/main/java/com/ex/App.java": "package com.ex;\nimport com.ex.util.Helper;\n"
    "import static com.ex.util.Strings.join;\nimport com.ex.model.*;\nimport java.util.List;\n"
    "import com.ex.gone.Missing;\nclass App {}\n",
    "src/main/java/com/ex/util/Helper.java": "package com.ex.util;\nclass Helper {}\n",
    "src/main/java/com/ex/util/Strings.java": "package com.ex.util;\nclass Strings {}\n",
    "src/main/java/com/ex/model/User.java": "package com.ex.model;\nimport com.ex.util.Helper;\n",
    "src/main/java/com/ex/model/Role.java": "package com.ex.model;\n",
}


def test_java_package_and_class_resolution():
    result = order_repo(files_of("java", JAVA))
    deps, _ = import_graph(files_of("java", JAVA))
    p = "src/main/java/com/ex/"
    assert deps[p + "App.java"] == sorted(
        p + x
        for x in ("util/Helper.java", "util/Strings.java", "model/User.java", "model/Role.java")
    )
    assert result.unresolved == 1 and result.external == 1
    assert before(result.order, p + "util/Helper.java", p + "model/User.java")


C = {
    "include/lib/api.h": '#include "lib/types.h"\n',
    "include/lib/types.h": "typedef int t;\n",
    "src/api.c": '#include "lib/api.h"\n#include <stdio.h>\n#include "internal.h"\n',
    "src/internal.h": '#include "missing.h"\n',
    "tools/cli.cpp": '#include "../include/lib/api.h"\n#include <lib/types.h>\n',
}


def test_c_includes_relative_and_include_dirs():
    deps, counts = import_graph(files_of("cpp", C))
    assert deps["include/lib/api.h"] == ["include/lib/types.h"]
    assert deps["src/api.c"] == ["include/lib/api.h", "src/internal.h"]
    assert deps["tools/cli.cpp"] == ["include/lib/api.h", "include/lib/types.h"]
    assert counts["unresolved"] == 1 and counts["external"] == 1


def test_cycles_are_broken_deterministically_and_recorded():
    tree = {"a.py": "import b\n", "b.py": "import c\n", "c.py": "import a\n", "d.py": "import a\n"}
    first = order_repo(files_of("python", tree))
    again = order_repo(list(reversed(files_of("python", tree))))
    assert first.order == again.order and first.cycles_broken == again.cycles_broken
    assert first.cycles_broken == [("c.py", "a.py")]
    assert first.order == ["c.py", "b.py", "a.py", "d.py"]


@pytest.mark.parametrize("n", [3000])
def test_long_chain_does_not_recurse(n):
    deps = {f"f{i:05d}": [f"f{i + 1:05d}"] if i + 1 < n else [] for i in range(n)}
    order, broken = dependency_order(deps)
    assert order[0] == f"f{n - 1:05d}" and not broken


def test_unsupported_and_broken_files_still_ordered():
    files = [
        {"path": "README.md", "lang": "markdown", "text": "# hi"},
        {"path": "x.py", "lang": "python", "text": "def (:\nimport y\nfrom .z import (a,\n"},
        {"path": "w.js", "lang": "javascript", "text": "import './x.js' }}\n"},
        {"path": "y.py", "lang": "python", "text": ""},
    ]
    result = order_repo(files)
    assert sorted(result.order) == ["README.md", "w.js", "x.py", "y.py"]
    assert result.parse_errors == 2 and ("x.py", "y.py") in result.edges
    assert [f["path"] for f in result.apply(files)] == result.order


def test_parsing_only_the_import_prefix_finds_late_and_long_imports():
    late = "import os\n" + "x = 1\n" * 3000 + "def f():\n    from pkg import (\n        late,\n    )\n"
    late += "def g():\n    return {\n" + "    'k': 1,\n" * 3000 + "}\n"
    assert len(import_prefix("python", late)) < len(late) / 2
    imps = extract_imports("python", "m.py", late)
    assert imps.specs == [("module", "os"), ("from", ("pkg", ("late",)))] and not imps.parse_error
    go = "package m\nimport (\n" + "".join(f'\t"example.com/m/p{i}"\n' for i in range(400)) + ")\n"
    go += "func F() {\n" + "\tx := 1\n" * 2000 + "}\n"
    specs = extract_imports("go", "m.go", go).specs
    assert len(specs) == 400 and specs[-1] == ("path", "example.com/m/p399")
    assert import_prefix("c", "int main(void) { return 0; }\n") == ""
    assert extract_imports("c", "x.c", "int x;\n" * 10).specs == []


def test_python_statements_span_parens_comments_and_backslashes():
    text = (
        '"""Docs.\n\nfrom time to time we import things.\n"""\n'
        "from a.b import (  # a comment with ) in it\n    c,\n    d,\n)\n"
        "import x, \\\n    y\n"
        "def f():\n    import z  # lazy\n"
    )
    from datagen.pack.extract import python_statements

    stmts = python_statements(text)
    assert stmts[1].startswith("from a.b import (") and stmts[1].endswith(")")
    assert stmts[2] == "import x, \\\n    y" and stmts[3] == "import z  # lazy"
    imps = extract_imports("python", "m.py", text)
    assert imps.specs == [("from", ("a.b", ("c", "d"))), ("module", "x"), ("module", "y"),
                          ("module", "z")]
    assert imps.parse_error  # the docstring prose line was tried and dropped


def test_repo_whose_root_is_the_package_resolves_by_repo_name():
    files = [
        {"repo": "my-lib", "path": "__init__.py", "lang": "python", "text": "from my_lib.core import x\n"},
        {"repo": "my-lib", "path": "core.py", "lang": "python", "text": "import my_lib.util\nimport other.util\n"},
        {"repo": "my-lib", "path": "util.py", "lang": "python", "text": ""},
    ]
    deps, counts = import_graph(files)
    assert deps == {"__init__.py": ["core.py"], "core.py": ["util.py"], "util.py": []}
    assert counts["external"] == 1


def test_import_of_a_dropped_duplicate_points_at_the_kept_copy():
    files = [
        {"path": "src/point.js", "lang": "javascript", "text": "import { r } from './util/round.js';\n"},
        {"path": "examples/lib/round.js", "lang": "javascript", "text": "export const r = 1;\n"},
    ]
    assert order_repo(files).unresolved == 1
    result = order_repo(files, aliases={"src/util/round.js": "examples/lib/round.js"})
    assert result.unresolved == 0 and result.edges == [("src/point.js", "examples/lib/round.js")]
    assert result.order == ["examples/lib/round.js", "src/point.js"]


def test_fast_scanners_agree_with_their_plain_definitions():
    """The str.find / jump-scan shortcuts give what the regex and posixpath would."""
    import posixpath
    import random

    from datagen.pack.extract import IMPORT_LINE, _python_import_lines
    from datagen.pack.resolve import _dir, _join

    rng = random.Random(7)
    pieces = ["import", "from", " ", "\t", "\\", "\n", "(", ")", "#", "x", "im", "port", "."]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        want = [m.start() for m in IMPORT_LINE["python"].finditer(text)]
        assert _python_import_lines(text) == want, repr(text)
    parts = ["a", "b/c", ".", "..", "/", "", "x.py", ".h", "d/", "/e"]
    for _ in range(3000):
        args = [rng.choice(parts) + rng.choice(parts) for _ in range(rng.randint(1, 3))]
        kept = [p for p in args if p]
        assert _join(*args) == (posixpath.normpath(posixpath.join(*kept)) if kept else ""), args
        assert _dir(args[0]) == posixpath.dirname(args[0]), args


@pytest.mark.parametrize("lang,path,text", [
    ("python", "a/m.py", "import os\nfrom .b import c as d, e\nfrom .. import x\n"),
    ("rust", "src/lib.rs", "mod a;\nuse crate::b::{c, d::E};\nextern crate f;\n"),
    ("java", "p/A.java", "package p.q;\nimport p.r.B;\nimport static p.s.C.*;\n"),
    ("c", "x.c", '#include "a.h"\n#include <stdio.h>\n'),
    ("python", "bad.py", "from\n"),
])
def test_imports_survive_the_crawl_column(lang, path, text):
    from datagen.pack.extract import Imports

    imps = extract_imports(lang, path, text)
    assert Imports.from_json(imps.to_json()) == imps


def test_ordering_reads_the_crawl_imports_instead_of_parsing():
    """A row's ``imports`` (written by the crawl) is what orders it; its text is not parsed."""
    from datatrove.data import Document

    from datagen.curate.imports_step import ImportsStep

    docs = [Document(text=t, id=p, metadata={"path": p, "lang": "python", "decision": "kept"})
            for p, t in [("a.py", "import b\n"), ("b.py", "x = 1\n")]]
    for doc in docs:
        ImportsStep().process(doc)
    rows = [{"path": d.metadata["path"], "lang": "python", "text": d.text, "imports": d.metadata["imports"]}
            for d in docs]
    assert order_repo(rows).order == ["b.py", "a.py"]
    rows[0]["text"] = "nothing imported here\n"  # the crawl's imports still decide
    assert order_repo(rows).order == ["b.py", "a.py"]
    rows[1]["imports"] = extract_imports("python", "b.py", "import a\n").to_json()
    assert order_repo(rows).cycles_broken == [("b.py", "a.py")]
