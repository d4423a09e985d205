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
    listed = SOUND + 'It raises ValueError("port out of range").\n\nThese tests must pass:\n- `tests/test_ports.py::test_range`\n'
    assert flags(view(listed)) == {}


def test_an_asserted_whitespace_nothing_shows_is_flagged():
    tests = {"tests/test_ports.py": "def test_range():\n    assert show_ports([80, 443]) == '80\\n  443'\n"}
    found = flags(view(SOUND, tests=tests))
    assert set(found) == {"exact_output"}
    assert "80\\\\n  443" in found["exact_output"]
