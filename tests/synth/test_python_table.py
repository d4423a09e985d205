"""Table tests of the Python strategies: source in, expected source out, fixed seed."""

from __future__ import annotations

from textwrap import dedent

import pytest

from tests.synth.helpers import mutate


def src(text: str) -> str:
    return dedent(text).lstrip("\n")


# (strategy, entity qualname, seed, source in, source out); out None = no site offered
CASES = [
    ("py_op_change_v1", "f", 0, """
        def f(a, b):
            return a + b  # sum
        """, """
        def f(a, b):
            return a - b  # sum
        """),
    ("py_op_change_v1", "f", 0, """
        def f(xs):
            total = 0
            for x in xs:
                total *= x
            return total
        """, """
        def f(xs):
            total = 0
            for x in xs:
                total /= x
            return total
        """),
    ("py_op_change_v1", "f", 0, """
        def f(name: str | None) -> str:
            return "<" + name
        """, None),
    ("py_compare_change_v1", "f", 0, """
        def f(a, b):
            return a < b
        """, """
        def f(a, b):
            return a <= b
        """),
    ("py_compare_change_v1", "f", 0, """
        def f(a, b):
            return a not in b
        """, """
        def f(a, b):
            return a in b
        """),
    ("py_compare_change_v1", "f", 0, """
        def f(a):
            return a is not None
        """, """
        def f(a):
            return a is None
        """),
    ("py_swap_operands_v1", "f", 0, """
        def f(a, b):
            return a - b * 2
        """, """
        def f(a, b):
            return b * 2 - a
        """),
    ("py_swap_operands_v1", "f", 0, """
        def f(a, b):
            return a == b
        """, None),
    ("py_bool_chain_v1", "f", 0, """
        def f(a, b):
            return a > 0 and b > 0
        """, """
        def f(a, b):
            return b > 0
        """),
    ("py_off_by_one_v1", "f", 0, """
        def f(items, n):
            return items[:n]
        """, """
        def f(items, n):
            return items[:n - 1]
        """),
    ("py_off_by_one_v1", "f", 0, """
        def f(n):
            return [i for i in range(len(n))]
        """, """
        def f(n):
            return [i for i in range(len(n) - 1)]
        """),
    ("py_off_by_one_v1", "f", 1, """
        def f(x):
            return x * 10
        """, """
        def f(x):
            return x * 11
        """),
    ("py_constant_change_v1", "f", 0, """
        def f():
            \"\"\"Docstrings stay.\"\"\"
            return True
        """, """
        def f():
            \"\"\"Docstrings stay.\"\"\"
            return False
        """),
    ("py_constant_change_v1", "f", 0, """
        def f(x):
            return x.split("abc")
        """, """
        def f(x):
            return x.split("abc_")
        """),
    ("py_constant_change_v1", "f", 0, """
        def f(x):
            return x * 8
        """, """
        def f(x):
            return x * 4
        """),
    ("py_default_arg_v1", "f", 0, """
        def f(x, default=None):
            return x or default
        """, """
        def f(x, default=0):
            return x or default
        """),
    ("py_default_arg_v1", "f", 0, """
        def f(pairs: tuple = ()) -> list:
            return list(pairs)
        """, """
        def f(pairs: tuple = None) -> list:
            return list(pairs)
        """),
    ("py_invert_if_v1", "f", 0, """
        def f(x):
            if x > 0:
                return "pos"
            else:
                return "neg"
        """, """
        def f(x):
            if x > 0:
                return "neg"
            else:
                return "pos"
        """),
    ("py_invert_if_v1", "f", 0, """
        def f(x):
            if x and x.ok:
                x.run()
        """, """
        def f(x):
            if not (x and x.ok):
                x.run()
        """),
    ("py_invert_if_v1", "f", 0, """
        def f(x):
            if not x:
                return 0
            return 1
        """, """
        def f(x):
            if x:
                return 0
            return 1
        """),
    ("py_remove_assign_v1", "f", 0, """
        def f(x):
            y = x * 2
            return y
        """, """
        def f(x):
            return y
        """),
    ("py_remove_assign_v1", "f", 0, """
        def f(x):
            if x:
                x.count += 1
            return x
        """, """
        def f(x):
            if x:
                pass
            return x
        """),
    ("py_remove_assign_v1", "Point", 0, """
        @dataclass
        class Point:
            x: int
            def norm(self):
                n = self.x
                return n
        """, """
        @dataclass
        class Point:
            def norm(self):
                n = self.x
                return n
        """),
    ("py_remove_cond_v1", "f", 0, """
        def f(x):
            if x < 0:
                x = -x
            return x
        """, """
        def f(x):
            return x
        """),
    ("py_remove_cond_v1", "f", 0, """
        def f(x):
            if x < 0:
                x = -x
            else:
                x = 0
            return x
        """, None),
    ("py_remove_loop_v1", "f", 0, """
        def f(xs):
            out = []
            for x in xs:
                out.append(x)
            return out
        """, """
        def f(xs):
            out = []
            return out
        """),
    ("py_remove_loop_v1", "f", 0, """
        def f(xs):
            while xs:
                xs.pop()
        """, """
        def f(xs):
            pass
        """),
    ("py_remove_wrapper_v1", "f", 0, """
        def f(path):
            with open(path) as fh:
                data = fh.read()
                # keep this comment
                return data.strip()
        """, """
        def f(path):
            data = fh.read()
            # keep this comment
            return data.strip()
        """),
    ("py_remove_wrapper_v1", "f", 0, """
        def f(x):
            try:
                return int(x)
            except ValueError:
                return 0
            finally:
                print("done")
        """, """
        def f(x):
            return int(x)
        """),
    ("py_remove_assert_v1", "f", 0, """
        def f(x):
            assert x > 0, "positive"
            return x
        """, """
        def f(x):
            return x
        """),
    ("py_remove_raise_v1", "f", 0, """
        def f(x):
            if x < 0:
                raise ValueError(x)
            return x
        """, """
        def f(x):
            if x < 0:
                pass
            return x
        """),
    ("py_remove_except_v1", "f", 0, """
        def f(x):
            try:
                return int(x)
            except ValueError:
                return 0
            except TypeError:
                return -1
        """, """
        def f(x):
            try:
                return int(x)
            except TypeError:
                return -1
        """),
    ("py_remove_except_v1", "f", 0, """
        def f(x):
            try:
                return int(x)
            except ValueError:
                return 0
        """, None),
    ("py_shuffle_stmts_v1", "f", 0, """
        def f(a):
            \"\"\"Doc.\"\"\"
            a.x = 1
            a.y = 2
            a.z = 3
            return a
        """, """
        def f(a):
            \"\"\"Doc.\"\"\"
            a.z = 3
            a.x = 1
            a.y = 2
            return a
        """),
    ("py_remove_base_v1", "Child", 0, """
        class Child(Base):
            pass
        """, """
        class Child:
            pass
        """),
    ("py_remove_base_v1", "Child", 0, """
        class Child(Base, Mixin, metaclass=Meta):
            pass
        """, """
        class Child(Mixin, metaclass=Meta):
            pass
        """),
    ("py_remove_method_v1", "C", 0, """
        class C:
            def a(self):
                return 1

            @property
            def b(self):
                return 2
        """, """
        class C:
            @property
            def b(self):
                return 2
        """),
    ("py_remove_method_v1", "C", 0, """
        class C:
            def only(self):
                return 1
        """, """
        class C:
            pass
        """),
    ("py_swap_args_v1", "f", 0, """
        def f(a, b):
            return divmod(a, b, key=1)
        """, """
        def f(a, b):
            return divmod(b, a, key=1)
        """),
    ("empty_body_v1", "f", 0, """
        def f(a, b):
            \"\"\"Add two numbers.\"\"\"
            # a comment
            total = a + b
            return total


        x = 1
        """, """
        def f(a, b):
            \"\"\"Add two numbers.\"\"\"
            # a comment
            raise NotImplementedError


        x = 1
        """),
    ("empty_body_v1", "C.m", 0, """
        class C:
            def m(self): return 1
        """, """
        class C:
            def m(self): raise NotImplementedError
        """),
    ("empty_body_v1", "f", 0, """
        def f():
            \"\"\"Only a docstring.\"\"\"
        """, """
        def f():
            \"\"\"Only a docstring.\"\"\"
            raise NotImplementedError
        """),
    ("remove_feature_v1", "helper", 0, """
        def helper(x):
            print(x)


        def main():
            helper(1)
            return 2
        """, """
        def main():
            return 2
        """),
    ("remove_feature_v1", "helper", 0, """
        def helper(x):
            return x


        def main():
            return helper(1)
        """, None),
    ("remove_feature_v1", "C.reset", 0, """
        class C:
            def reset(self):
                self.n = 0

            def run(self):
                self.reset()
                return self.n
        """, """
        class C:
            def run(self):
                return self.n
        """),
]


@pytest.mark.parametrize(("strategy", "qualname", "seed", "before", "after"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_python_mutation(strategy: str, qualname: str, seed: int, before: str, after: str | None) -> None:
    expected = None if after is None else src(after)
    assert mutate(strategy, src(before), qualname, seed=seed) == expected
