"""tree-sitter error ratio: ~0 on valid code, > 0 on broken code, for 8+ languages."""

from __future__ import annotations

import pytest
from datatrove.data import Document

from datagen.config.curate import SyntaxConfig
from datagen.curate.syntax import SyntaxStep, error_ratio, grammar_name

VALID = {
    "python": "import os\n\n\ndef f(x):\n    return os.path.join(x, 'a')\n",
    "javascript": "function f(x) {\n  return x.map((y) => y * 2);\n}\nmodule.exports = f;\n",
    "typescript": "export function f(x: number[]): number {\n  return x.length;\n}\n",
    "tsx": "export const A = (p: {n: string}) => <div title={p.n}>hi</div>;\n",
    "go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(1)\n}\n',
    "rust": 'fn main() {\n    let v: Vec<i32> = vec![1, 2];\n    println!("{}", v.len());\n}\n',
    "java": "class A {\n  int f(int x) {\n    return x + 1;\n  }\n}\n",
    "c": '#include <stdio.h>\nint main(void) {\n  printf("%d", 1);\n  return 0;\n}\n',
    "cpp": "#include <vector>\nint f(std::vector<int>& v) {\n  return v.size();\n}\n",
}
BROKEN = {
    "python": "def f(x:\n    return (x +\n",
    "javascript": "function f(x) {\n  return x.map((y) => y * );\n",
    "typescript": "export function f(x: number[]: number {\n  return x.length\n",
    "tsx": "export const A = () => <div title=>hi</span>;\n",
    "go": "package main\n\nfunc main( {\n\tfmt.Println(1\n}\n",
    "rust": 'fn main() {\n    let v = vec![1, 2;\n    println!("{}" v.len());\n',
    "java": "class A {\n  int f(int x) {\n    return x + ;\n  \n",
    "c": 'int main(void) {\n  printf("%d", 1;\n  return 0\n',
    "cpp": "int f(std::vector<int>& v {\n  return v.size()\n",
}


@pytest.mark.parametrize("grammar", sorted(VALID))
def test_valid_code_scores_zero_and_broken_code_scores_above(grammar):
    assert error_ratio(VALID[grammar], grammar) == 0.0
    assert error_ratio(BROKEN[grammar], grammar) > 0.0


def test_grammar_name_aliases_and_tsx():
    assert grammar_name("TypeScript", "src/a.tsx") == "tsx"
    assert grammar_name("typescript", "src/a.ts") == "typescript"
    assert grammar_name("c++") == "cpp"
    assert grammar_name("markdown") is None


def _doc(text: str, lang: str, path: str = "a") -> Document:
    meta = {"lang": lang, "path": path, "decision": "kept", "reason": None}
    return Document(text=text, id=path, metadata=meta)


def test_step_scores_every_file_and_drops_above_the_cut():
    good, bad = _doc(VALID["go"], "go"), _doc(BROKEN["go"], "go")
    mostly_ok = _doc(VALID["python"] * 30 + "x = (\n", "python")
    md = _doc("# title\n", "markdown")
    out = list(SyntaxStep(SyntaxConfig(max_error_ratio=0.2)).run([good, bad, mostly_ok, md]))
    assert [d.metadata["decision"] for d in out] == ["kept", "dropped", "kept", "kept"]
    assert bad.metadata["reason"] == "syntax_errors"
    assert good.metadata["syntax_error_ratio"] == 0.0
    assert 0 < mostly_ok.metadata["syntax_error_ratio"] < 0.2
    assert "syntax_error_ratio" not in md.metadata


def test_dropped_files_are_not_parsed():
    doc = _doc(BROKEN["c"], "c")
    doc.metadata.update(decision="dropped", reason="binary")
    list(SyntaxStep(SyntaxConfig()).run([doc]))
    assert doc.metadata["reason"] == "binary" and "syntax_error_ratio" not in doc.metadata


CPP_HEADER = """#pragma once
#include <vector>

namespace demo {

template <typename T>
class Stack {
 public:
  void push(const T& v) { items_.push_back(v); }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<T> items_;
};

struct DEMO_API Node : public Base {
  int value;
  explicit Node(int v) : value(v) {}
};

}  // namespace demo
"""


def test_c_headers_fall_back_to_cpp_and_macros_stay_under_the_c_cut():
    assert error_ratio(CPP_HEADER.replace("DEMO_API ", ""), "c") == 0.0  # C++ grammar fallback
    with_macro = error_ratio(CPP_HEADER, "c")
    assert 0 < with_macro < SyntaxConfig().lang_max_error_ratio["c"]
    (doc,) = SyntaxStep(SyntaxConfig()).run([_doc(CPP_HEADER, "c", "demo.h")])
    assert doc.metadata["decision"] == "kept"
    (doc,) = SyntaxStep(SyntaxConfig()).run([_doc(BROKEN["c"] * 3, "c", "bad.c")])
    assert doc.metadata["reason"] == "syntax_errors"


def test_a_repeated_text_is_scored_once_with_the_same_score():
    """The step remembers recent scores by (grammar, bytes): a copy gets the score of the
    original without a second parse; the same text under another grammar is parsed anew,
    and a text the memory has let go of is parsed again to the same score."""
    step = SyntaxStep(SyntaxConfig(max_error_ratio=1.0))
    step.remembered = 2
    text = VALID["go"]  # clean Go, not Python
    docs = [_doc(text, "go", "a.go"), _doc(text, "go", "copy.go"), _doc(text, "python", "a.py"),
            _doc(VALID["python"], "python", "b.py"), _doc(VALID["rust"], "rust", "c.rs"),
            _doc(text, "go", "again.go")]
    out = list(step.run(docs))
    ratios = [d.metadata["syntax_error_ratio"] for d in out]
    assert ratios[0] == ratios[1] == ratios[5] == 0.0
    assert ratios[2] == round(error_ratio(text, "python"), 6) > 0
    assert step.stats["same_text"].total == 1  # only copy.go: again.go came after 3 others (memory of 2)
