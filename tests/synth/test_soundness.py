"""The static soundness checks, one planted case per flag, and a sound task that none flags."""

from __future__ import annotations

from datagen.synth.soundness import TaskView, check_task, implicit_names

CODE = {"net/ports.py": 'def parse_port(text):\n    """The port number in text."""\n    raise NotImplementedError\n'}
FIX = ("diff --git a/net/ports.py b/net/ports.py\n--- a/net/ports.py\n+++ b/net/ports.py\n@@ -1,3 +1,6 @@\n"
       " def parse_port(text):\n     \"\"\"The port number in text.\"\"\"\n-    raise NotImplementedError\n"
       "+    value = int(text)\n+    if not 0 < value < 65536:\n+        raise ValueError(\"port out of range\")\n"
       "+    return value\n")
TESTS = {"tests/test_ports.py": (
    "import pytest\nfrom net.ports import parse_port\n\n\ndef test_parse():\n    assert parse_port('80') == 80\n\n\n"
    "def test_range():\n    with pytest.raises(ValueError, match='port out of range'):\n        parse_port('70000')\n")}
SOUND = "Implement `parse_port` in `net/ports.py`: it returns the port number of a text.\n"


def view(statement: str = SOUND, patch: str = FIX, tests=TESTS, changed=("net/ports.py",), **kw) -> TaskView:
    return TaskView(statement=statement, interface="net/ports.py:\n    def parse_port(text)\n", patch=patch,
                    failing=["tests/test_ports.py::test_range"], tests=tests, code=CODE, changed=list(changed),
                    names=["tests/test_ports.py::test_range", "tests/test_ports.py::test_parse"], **kw)


def flags(v: TaskView) -> dict[str, str]:
    return {f.check: f.evidence for f in check_task(v)}


def test_an_error_message_only_the_fix_holds_is_implicit_naming():
    found = flags(view())
    assert set(found) == {"b2_implicit_naming"}
    assert '"port out of range"' in found["b2_implicit_naming"]


def test_a_statement_that_gives_the_message_is_sound():
    assert flags(view(SOUND + 'Out-of-range ports raise ValueError("port out of range").\n')) == {}
    assert implicit_names(view()) == ['"port out of range"']


def test_a_fix_that_edits_a_fixture_the_tests_read_is_flagged():
    fixture = ("diff --git a/tests/data/ports.json b/tests/data/ports.json\n--- a/tests/data/ports.json\n"
               "+++ b/tests/data/ports.json\n@@ -1 +1 @@\n-[80]\n+[80, 443]\n")
    tests = {"tests/test_ports.py": "import json\n\n\ndef test_range():\n"
             "    assert json.load(open('tests/data/ports.json')) == [80, 443]\n"}
    found = flags(view(SOUND, fixture, tests, changed=["tests/data/ports.json"]))
    assert set(found) == {"b10_text_files"}
    assert "tests/data/ports.json" in found["b10_text_files"]


def test_a_statement_naming_the_failing_test_or_a_line_is_flagged():
    found = flags(view(SOUND + 'It raises ValueError("port out of range"); see test_range at line 9.\n'))
    assert set(found) == {"statement_names_test", "statement_line_number"}
    assert "test_range" in found["statement_names_test"]
    assert "line 9" in found["statement_line_number"]


def test_the_template_list_of_failing_tests_is_not_prose():
    listed = (SOUND + 'It raises ValueError("port out of range").\n\n'
              "These tests must pass:\n- `tests/test_ports.py::test_range`\n")
    assert flags(view(listed)) == {}


def test_an_asserted_whitespace_nothing_shows_is_flagged():
    tests = {"tests/test_ports.py": "def test_range():\n    assert show_ports([80, 443]) == '80\\n  443'\n"}
    found = flags(view(SOUND, tests=tests))
    assert set(found) == {"exact_output"}
    assert "80\\\\n  443" in found["exact_output"]


def _patch(path: str, added: str) -> str:
    lines = "".join(f"+{x}\n" for x in added.splitlines())
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,0 +1,{len(added.splitlines())} @@\n{lines}"


# (test file, its text, failing test id, fix path, fix's added text, what only the fix shows)
CASES = [
    ("test/ports.test.js",
     'it("rejects big ports", () => {\n  expect(() => parse("70000")).toThrow("port too big");\n});\n'
     'it("other", () => { expect(size()).toBe(1); });\n', "test/ports.test.js > rejects big ports", "src/ports.js",
     'if (n > 65535) throw new Error("port too big");', ['"port too big"']),
    ("store_test.go", "func TestExpiry(t *testing.T) {\n\ts := New()\n\ts.SetTTL(time.Second)\n\tif s.Expired() {\n"
     "\t\tt.Fatal(\"expired\")\n\t}\n}\n", "example.com/kv::TestExpiry", "store.go",
     "func (s *Store) Expired() bool {\n\treturn time.Now().After(s.deadline.Add(time.Second))\n}", ["Expired"]),
    ("tests/test_cache.py", "def test_size():\n    c = Cache()\n    assert c.size_hint == len(sorted([1]))\n",
     "tests/test_cache.py::test_size", "cache.py", "        self.size_hint = len(sorted(self.items))", ["size_hint"]),
]


def test_names_the_fix_introduces_count_and_a_library_name_does_not():
    for test_path, text, test_id, fix_path, added, expected in CASES:
        v = TaskView(statement="Make the failing test pass.\n", interface="", patch=_patch(fix_path, added),
                     failing=[test_id], tests={test_path: text}, code={fix_path: "package x\n"})
        assert implicit_names(v) == expected, test_id


def test_quoted_test_output_is_not_prose():
    quoted = SOUND + 'It raises ValueError("port out of range").\n\nA failing test reports:\n\n' \
        "    tests/test_ports.py:9: in test_range\n"
    assert flags(view(quoted)) == {}
