"""The ``feature`` family without a sandbox: stubs in every language, the static reach of a
group of tests, the choice of a feature and its size limits, the copy check of removed
bodies, the template statement and the card's size table."""

from __future__ import annotations

import pytest

from datagen.records.tasks import TaskRecord
from datagen.synth.emit import CopyIndex
from datagen.synth.entities import extract_entities
from datagen.synth.families.feature import FeatureSize, changed_line_count, choose, feature_candidates, interface
from datagen.synth.languages import spec
from datagen.synth.reach import blocks, load_time, static_reach
from datagen.synth.source import is_valid
from datagen.synth.spread import family_markdown
from datagen.synth.statements import RepoTokens, feature_statement, leak, listed_tests
from datagen.synth.stubs import signature, stub_file

# one function per language: (path, text, the signature the stub keeps, a line only the body holds)
SOURCES = {
    "python": ("m.py", 'def area(w, h):\n    """The area."""\n    total = w * h\n    return total\n',
               "def area(w, h)", "total = w * h"),
    "javascript": ("m.js", "export function area(w, h) {\n  const total = w * h;\n  return total;\n}\n",
                   "function area(w, h)", "const total = w * h;"),
    "typescript": ("m.ts", "export function area(w: number, h: number): number {\n  const total = w * h;\n"
                   "  return total;\n}\n", "function area(w: number, h: number): number", "const total = w * h;"),
    "go": ("m.go", 'package m\n\nimport "math"\n\n// Area is the area.\nfunc Area(w, h float64) float64 {\n'
           "\treturn math.Abs(w * h)\n}\n", "func Area(w, h float64) float64", "return math.Abs(w * h)"),
    "rust": ("m.rs", "/// The area.\npub fn area(w: u32, h: u32) -> u32 {\n    let total = w * h;\n    total\n}\n",
             "pub fn area(w: u32, h: u32) -> u32", "let total = w * h;"),
    "java": ("M.java", "class M {\n    /** The area. */\n    static int area(int w, int h) {\n"
             "        int total = w * h;\n        return total;\n    }\n}\n",
             "static int area(int w, int h)", "int total = w * h;"),
    "c": ("m.c", "/* The area. */\nint area(int w, int h) {\n    int total = w * h;\n    return total;\n}\n",
          "int area(int w, int h)", "int total = w * h;"),
    "cpp": ("m.cpp", "int Box::area(int w, int h) const {\n    int total = w * h;\n    return total;\n}\n",
            "int Box::area(int w, int h) const", "int total = w * h;"),
    "ruby": ("m.rb", "class Box\n  # The area.\n  def area(w, h)\n    total = w * h\n    total\n  end\nend\n",
             "def area(w, h)", "total = w * h"),
    "php": ("m.php", "<?php\nclass Box {\n    /** The area. */\n    public function area(int $w, int $h): int\n    {\n"
            "        $total = $w * $h;\n        return $total;\n    }\n}\n",
            "public function area(int $w, int $h): int", "$total = $w * $h;"),
}


@pytest.mark.parametrize("lang", sorted(SOURCES))
def test_stub_keeps_the_interface_and_parses(lang: str) -> None:
    path, text, sig, body_line = SOURCES[lang]
    funcs = [e for e in extract_entities(path, text, lang) if e.kind in ("function", "method")]
    new, stubbed = stub_file(path, text, funcs)
    assert stubbed == funcs
    assert body_line not in new and spec(lang).stub.statement in new
    assert is_valid(new, lang, path)
    assert signature(text, funcs[0]) == sig and sig.split("(")[0].split()[-1] in new
    doc = next((line for line in text.splitlines() if "area." in line), None)
    assert doc is None or doc in new  # doc comments and docstrings stay
    assert stub_file(path, new, [e for e in extract_entities(path, new, lang) if e.kind != "class"]) is None


def test_go_stub_drops_the_imports_only_the_body_used() -> None:
    path, text, _, _ = SOURCES["go"]
    new, _ = stub_file(path, text, extract_entities(path, text, "go"))
    assert '"math"' not in new and "import" not in new


def test_java_constructor_calling_this_is_not_stubbed() -> None:
    text = "class A {\n    A() {\n        this(1);\n    }\n    A(int x) {\n        y = x;\n    }\n}\n"
    ctors = [e for e in extract_entities("A.java", text, "java") if e.kind == "method"]
    new, stubbed = stub_file("A.java", text, ctors)
    assert len(stubbed) == 1 and "this(1);" in new and "y = x;" not in new


LIB = '''def parse(text):
    parts = text.split(",")
    cleaned = [p.strip() for p in parts]
    kept = [p for p in cleaned if p]
    return [normalize(p) for p in kept]


def normalize(word):
    lowered = word.lower()
    return lowered.replace("-", "_")


def render(items):
    joined = ", ".join(items)
    return "[" + joined + "]"


def shared(x):
    doubled = x * 2
    return doubled + 1
'''
FMT = '''def pretty(items):
    head = items[:3]
    rest = len(items) - 3
    return render(head) + f" and {rest} more"
'''
TESTS = {
    "tests/test_parse.py": "from lib import parse, shared\n\ndef test_parse():\n"
                           "    assert parse('A, b') == ['a', 'b']\n\ndef test_shared():\n    assert shared(1) == 3\n",
    "tests/test_render.py": "from lib import render, shared\nfrom fmt import pretty\n\ndef test_render():\n"
                            "    assert render(['a']) == '[a]'\n    assert pretty(list('abcd'))\n"
                            "    assert shared(2) == 5\n",
    "tests/test_other.py": "from lib import shared\n\ndef test_shared():\n    assert shared(0) == 1\n",
}
TEXTS = {"lib.py": LIB, "fmt.py": FMT, **TESTS}


def _reach():
    entities = extract_entities("lib.py", LIB, "python") + extract_entities("fmt.py", FMT, "python")
    return entities, static_reach(entities, TEXTS, sorted(TESTS), {".py": "python"})


def test_static_reach_follows_calls_from_the_test_code() -> None:
    _, reach = _reach()
    assert reach["lib.py::normalize"] == {"tests/test_parse.py"}  # through parse's body
    assert reach["fmt.py::pretty"] == {"tests/test_render.py"}
    assert reach["lib.py::render"] == {"tests/test_render.py"}  # named by the test and through pretty
    assert reach["lib.py::shared"] == set(TESTS)


def test_feature_is_what_the_group_reaches_and_the_others_do_not() -> None:
    entities, reach = _reach()
    found = feature_candidates("r", entities, TEXTS, reach, 8, FeatureSize((4, 400), (1, 40)), 0)
    by_group = {c.entity: c for c in found}
    # test_render's feature spans two files (render, pretty), comes first and leaves shared alone
    assert found[0].entity == "fmt.py::pretty;lib.py::render" and set(found[0].changes) == {"fmt.py", "lib.py"}
    assert "lib.py::normalize;lib.py::parse" in by_group
    assert all("shared" not in c.entity for c in found)
    assert all(c.family == "feature" and c.strategy == "feature_v1" for c in found)
    again = feature_candidates("r", entities, TEXTS, reach, 8, FeatureSize((4, 400), (1, 40)), 0)
    assert [c.candidate_id for c in again] == [c.candidate_id for c in found]


def test_the_largest_features_come_first() -> None:
    """Without the multi-file preference, the budget goes to the largest features first."""
    entities, reach = _reach()
    found = feature_candidates("r", entities, TEXTS, reach, 8, FeatureSize((4, 400), (1, 40), False), 0)
    sizes = [changed_line_count(TEXTS, c.changes) for c in found]
    assert len(found) == 2 and sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[1]
    assert found[0].entity == "lib.py::normalize;lib.py::parse"
    [top] = feature_candidates("r", entities, TEXTS, reach, 1, FeatureSize((4, 400), (1, 40), False), 0)
    assert top.entity == found[0].entity


def test_feature_size_limits() -> None:
    entities, reach = _reach()
    assert feature_candidates("r", entities, TEXTS, reach, 8, FeatureSize((30, 400), (1, 40)), 0) == []
    assert feature_candidates("r", entities, TEXTS, reach, 8, FeatureSize((4, 400), (3, 40)), 0) == []
    small = feature_candidates("r", entities, TEXTS, reach, 8, FeatureSize((1, 5), (1, 40)), 0)
    assert small and all(changed_line_count(TEXTS, c.changes) <= 5 for c in small)
    assert len(feature_candidates("r", entities, TEXTS, reach, 1, FeatureSize((4, 400), (1, 40)), 0)) == 1


def test_a_removed_body_standing_in_another_file_is_found() -> None:
    entities, reach = _reach()
    [feature] = [c for c in feature_candidates("r", entities, TEXTS, reach, 8, FeatureSize((4, 400), (1, 40)), 0)
                 if c.entity == "lib.py::normalize;lib.py::parse"]
    assert CopyIndex(TEXTS).copy_of_removed(feature.changes) == ""
    body = ('    parts = text.split(",")\n    cleaned = [p.strip() for p in parts]\n'
            '    kept = [p for p in cleaned if p]\n    return [normalize(p) for p in kept]')
    docs = {**TEXTS, "docs/usage.md": "# Usage\n\n```python\ndef parse(text):\n" + body + "\n```\n"}
    assert CopyIndex(docs).copy_of_removed(feature.changes) == "lib.py in docs/usage.md"
    # a short body (one line) is no copy of the answer
    one_line = {**TEXTS, "docs/usage.md": 'lowered = word.lower()\nreturn lowered.replace("-", "_")\n'}
    assert CopyIndex(one_line).copy_of_removed(feature.changes) == ""


def test_feature_statement_names_the_interface_and_the_tests() -> None:
    entities, reach = _reach()
    [feature] = [c for c in feature_candidates("r", entities, TEXTS, reach, 8, FeatureSize((4, 400), (1, 40)), 0)
                 if c.entity == "fmt.py::pretty;lib.py::render"]
    api = interface(TEXTS, feature.entity, {"lib.py": "python", "fmt.py": "python"})
    assert api == [("fmt.py", "def pretty(items)"), ("lib.py", "def render(items)")]
    patch = "".join(f"+{line}\n" for line in LIB.splitlines() + FMT.splitlines())
    fix_only = RepoTokens(TEXTS).fix_only(feature.changes, patch)
    st = feature_statement("r", api, ["tests/test_render.py::test_render"], patch, fix_only)
    assert "def pretty(items)" in st.text and "`fmt.py`" in st.text and "def render(items)" in st.text
    assert listed_tests(st.text) == ["tests/test_render.py::test_render"]
    assert leak(st.text, patch, fix_only) is None and st.style == "template"


def _record(iid: str, lines: int, files: int) -> TaskRecord:
    return TaskRecord(instance_id=iid, repo="r", base_commit="0" * 40, patch="", test_patch="", FAIL_TO_PASS=["a"],
                      PASS_TO_PASS=["b"], changed_lines=lines, changed_files=files, repo_path="envs/x.git")


def test_card_sizes_by_family_beside_the_references() -> None:
    records = [_record("a", 4, 1), _record("b", 120, 3), _record("c", 60, 2)]
    md = "\n".join(family_markdown(records, {"a": "procedural", "b": "feature", "c": "feature"}))
    assert "| feature | 2 | 90.0 | 60 | 2.5 | 100% | 100% |" in md
    assert "| procedural | 1 | 4 | 4 | 1.0 | 0% | 0% |" in md
    assert "| all | 3 | 60 | 60 | 2.0 | 67% | 67% |" in md
    assert "SWE-bench Pro" in md and "CursorBench" in md


def test_a_lone_test_file_is_split_into_its_blocks() -> None:
    rust = ("use ring::Ring;\n\n#[test]\nfn pushes() {\n    let r = Ring::new(2);\n    r.push(1);\n}\n\n"
            "#[test]\nfn pops() {\n    let r = Ring::new(2);\n    r.pop();\n}\n")
    assert [line for line, _ in blocks(rust, "rust")] == [4, 10]
    js = ("import { area } from '../src/a.js';\n\ndescribe('shapes', () => {\n  test('area', () => {\n"
          "    area(1);\n  });\n  test('perimeter', () => {\n    perimeter(2);\n  });\n});\n")
    found = blocks(js, "javascript")
    assert len(found) == 2 and "area(1)" in found[0][1] and "perimeter(2)" in found[1][1]
    lib = "pub fn push(x: u8) {\n    let _ = x;\n}\n\npub fn pop() {\n    let _ = 1;\n}\n"
    entities = extract_entities("src/lib.rs", lib, "rust")
    reach = static_reach(entities, {"src/lib.rs": lib, "tests/ring.rs": rust.replace("r.", "")},
                         ["tests/ring.rs"], {".rs": "rust"})
    assert reach == {"src/lib.rs::push": {"tests/ring.rs:4"}, "src/lib.rs::pop": {"tests/ring.rs:10"}}


def test_a_test_programs_own_main_reaches_no_main_of_the_repo() -> None:
    """C/C++ test executables define ``main``; a benchmark or tool of the repo does too: the
    name joins nothing (it made a feature of a benchmark's functions that no test runs)."""
    bench = "int make_data(int n) {\n  return n * 2;\n}\n\nint main() {\n  return make_data(3);\n}\n"
    lib = "int twice(int x) {\n  return x + x;\n}\n"
    test = "#include \"lib.h\"\nint main() {\n  return twice(2) == 4 ? 0 : 1;\n}\n"
    entities = extract_entities("bench/bench.c", bench, "c") + extract_entities("lib.c", lib, "c")
    reach = static_reach(entities, {"bench/bench.c": bench, "lib.c": lib, "tests/t.c": test, "tests/u.c": test},
                         ["tests/t.c", "tests/u.c"], {".c": "c"})
    assert reach == {"lib.c::twice": {"tests/t.c", "tests/u.c"}}


def test_what_runs_at_module_load_is_never_a_feature() -> None:
    lib = ("function scale(x) {\n  const k = factor();\n  return x * k;\n}\n\nfunction factor() {\n  const f = 2;\n"
           "  return f;\n}\n\nfunction area(w, h) {\n  const a = w * h;\n  return a;\n}\n\n"
           "export const UNIT = scale(1);\n")
    entities = extract_entities("lib.js", lib, "javascript")
    assert load_time(entities, {"lib.js": lib}) == {"lib.js::scale", "lib.js::factor"}
    # a call in a comment (a doc comment's example) runs nothing at load
    documented = "/**\n * Example: area(2, 3) // 6\n */\n" + lib.replace("export const UNIT = scale(1);\n", "")
    entities_doc = extract_entities("lib.js", documented, "javascript")
    assert load_time(entities_doc, {"lib.js": documented}) == set()
    tests = {"t/a.test.js": "test('a', () => { area(1, 2); scale(3); });\n",
             "t/b.test.js": "test('b', () => { UNIT; });\n"}
    texts = {"lib.js": lib, **tests}
    reach = static_reach(entities, texts, sorted(tests), {".js": "javascript"})
    found = feature_candidates("r", entities, texts, reach, 8, FeatureSize((1, 400), (1, 40)), 0)
    assert [c.entity for c in found] == ["lib.js::area"]


def test_a_feature_leaves_at_least_half_the_groups_untouched() -> None:
    funcs = [e for e in extract_entities("lib.py", LIB, "python") if e.kind == "function"]
    by_name = {e.name: e for e in funcs}
    reach = {"lib.py::parse": {"g1"}, "lib.py::normalize": {"g1", "g2"}, "lib.py::render": {"g1", "g3"},
             "lib.py::shared": {"g1", "g2", "g3", "g4"}}
    picked = choose("g1", funcs, reach, 4, 40)
    # parse (g1 only), then normalize (g1, g2: two of four groups); render would make it three
    assert picked == [by_name["parse"], by_name["normalize"]]


def test_go_stubs_panic_and_c_stubs_keep_their_uses() -> None:
    go = ("package a\n\nfunc F(a int) (x int, err error) {\n\treturn a, nil\n}\n\n"
          "func G[V any](v V) (V, bool) {\n\treturn v, true\n}\n\nfunc H() {\n\tF(1)\n}\n")
    new, _ = stub_file("a.go", go, extract_entities("a.go", go, "go"))
    assert new.count('panic("not implemented")') == 3 and "return" not in new
    assert "F(1)" not in new and is_valid(new, "go", "a.go")
    c = ("static int first(const char *s) {\n    return s[0];\n}\n\n"
         "int score(const char *s, int n) {\n    return first(s) * n;\n}\n")
    entities = [e for e in extract_entities("a.c", c, "c") if e.name == "score"]
    new, _ = stub_file("a.c", c, entities)
    assert "(void)s;\n    (void)n;\n    (void)first;\n    __builtin_trap();" in new
