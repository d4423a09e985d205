"""Table tests of the JavaScript/TypeScript strategies: source in, expected source out, fixed seed."""

from __future__ import annotations

from textwrap import dedent

import pytest

from tests.synth.helpers import mutate


def src(text: str) -> str:
    return dedent(text).lstrip("\n")


# (strategy, language, entity qualname, seed, source in, source out); out None = no site offered
CASES = [
    ("js_op_change_v1", "javascript", "f", 0, """
        function f(a, b) {
          return a + b; // sum
        }
        """, """
        function f(a, b) {
          return a - b; // sum
        }
        """),
    ("js_op_change_v1", "javascript", "f", 0, """
        function f(a) {
          return 'n=' + a;
        }
        """, None),
    ("js_op_change_v1", "typescript", "f", 0, """
        export function f(xs: Array<number>, k: number): number {
          let total: number = 0;
          total += xs.length;
          return total;
        }
        """, """
        export function f(xs: Array<number>, k: number): number {
          let total: number = 0;
          total -= xs.length;
          return total;
        }
        """),
    ("js_compare_change_v1", "javascript", "f", 0, """
        const f = (a, b) => a === b;
        """, """
        const f = (a, b) => a !== b;
        """),
    ("js_compare_change_v1", "javascript", "f", 0, """
        function f(a, b) {
          return a < b;
        }
        """, """
        function f(a, b) {
          return a <= b;
        }
        """),
    ("js_swap_operands_v1", "javascript", "f", 0, """
        function f(a, b) {
          return a / b;
        }
        """, """
        function f(a, b) {
          return b / a;
        }
        """),
    ("js_bool_chain_v1", "javascript", "f", 0, """
        function f(a, b) {
          return a.ok && b.ok;
        }
        """, """
        function f(a, b) {
          return b.ok;
        }
        """),
    ("js_off_by_one_v1", "javascript", "f", 0, """
        function f(xs) {
          return xs[xs.length];
        }
        """, """
        function f(xs) {
          return xs[(xs.length - 1)];
        }
        """),
    ("js_off_by_one_v1", "javascript", "f", 1, """
        function f(x) {
          return x * 10;
        }
        """, """
        function f(x) {
          return x * 11;
        }
        """),
    ("js_constant_change_v1", "javascript", "f", 0, """
        function f(x) {
          return x === null;
        }
        """, """
        function f(x) {
          return x === undefined;
        }
        """),
    ("js_constant_change_v1", "javascript", "f", 0, """
        function f(x) {
          return x.split('abc');
        }
        """, """
        function f(x) {
          return x.split('abc_');
        }
        """),
    ("js_constant_change_v1", "typescript", "f", 0, """
        function f(kind: 'a' | 'b'): boolean {
          return true;
        }
        """, """
        function f(kind: 'a' | 'b'): boolean {
          return false;
        }
        """),
    ("js_invert_if_v1", "javascript", "f", 0, """
        function f(x) {
          if (x > 0) {
            return 'pos';
          } else {
            return 'neg';
          }
        }
        """, """
        function f(x) {
          if (x > 0) {
            return 'neg';
          } else {
            return 'pos';
          }
        }
        """),
    ("js_invert_if_v1", "javascript", "f", 0, """
        function f(x) {
          if (x && x.ok) run(x);
        }
        """, """
        function f(x) {
          if (!(x && x.ok)) run(x);
        }
        """),
    ("js_invert_if_v1", "javascript", "f", 0, """
        function f(x) {
          if (!x.ready) {
            return;
          }
          x.go();
        }
        """, """
        function f(x) {
          if (x.ready) {
            return;
          }
          x.go();
        }
        """),
    ("js_remove_assign_v1", "javascript", "C.constructor", 0, """
        class C {
          constructor(r) {
            this.r = r;
          }
        }
        """, """
        class C {
          constructor(r) {
          }
        }
        """),
    ("js_remove_guard_v1", "javascript", "f", 0, """
        function f(xs) {
          if (xs.length === 0) {
            return null;
          }
          if (xs.length > 5) xs.sort();
          return xs[0];
        }
        """, """
        function f(xs) {
          if (xs.length > 5) xs.sort();
          return xs[0];
        }
        """),
    ("js_remove_cond_v1", "javascript", "f", 0, """
        function f(xs) {
          if (xs.length === 0) {
            return null;
          }
          if (xs.length > 5) xs.sort();
          return xs[0];
        }
        """, """
        function f(xs) {
          if (xs.length === 0) {
            return null;
          }
          return xs[0];
        }
        """),
    ("js_remove_loop_v1", "javascript", "f", 0, """
        function f(xs) {
          let total = 0;
          for (const x of xs) {
            total += x;
          }
          return total;
        }
        """, """
        function f(xs) {
          let total = 0;
          return total;
        }
        """),
    ("js_remove_loop_v1", "javascript", "f", 0, """
        function f(xs) {
          if (xs) for (const x of xs) use(x);
        }
        """, None),
    ("js_swap_args_v1", "javascript", "f", 0, """
        function f(a, b) {
          return Math.pow(a, b, ...rest);
        }
        """, """
        function f(a, b) {
          return Math.pow(b, a, ...rest);
        }
        """),
    ("js_remove_method_v1", "javascript", "C", 0, """
        export class C {
          a() {
            return 1;
          }

          b() {
            return 2;
          }
        }
        """, """
        export class C {
          b() {
            return 2;
          }
        }
        """),
    ("empty_body_v1", "javascript", "f", 0, """
        /** Doc comment stays. */
        export function f(a, b) {
          const c = a + b;
          return c;
        }
        """, """
        /** Doc comment stays. */
        export function f(a, b) {
          throw new Error("not implemented");
        }
        """),
    ("empty_body_v1", "javascript", "f", 0, """
        export const f = (a) => a * 2;
        """, """
        export const f = (a) => { throw new Error("not implemented"); };
        """),
    ("empty_body_v1", "typescript", "P.norm", 0, """
        class P {
          norm(): number { return 1; }
        }
        """, """
        class P {
          norm(): number { throw new Error("not implemented"); }
        }
        """),
]


@pytest.mark.parametrize(("strategy", "lang", "qualname", "seed", "before", "after"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_js_mutation(strategy: str, lang: str, qualname: str, seed: int, before: str, after: str | None) -> None:
    expected = None if after is None else src(after)
    assert mutate(strategy, src(before), qualname, lang=lang, seed=seed) == expected
