"""The failure message a template statement quotes is one of the failing tests' own and the
same whatever order the runner printed its tests in (parallel Go packages, cargo's test
threads, vitest / jest workers, a random spec order)."""

from __future__ import annotations

import pytest

from datagen.synth.check import stable_output
from datagen.synth.statements import first_error, leaf_name, template_statement

# go test -v (go_output of -json) of two packages; each package's block is printed whole
GO_SERVER = """=== RUN   TestProtocolSession
    server_test.go:23: "SET color blue" -> "", usage: SET key value [ttl-seconds]; want "OK"
--- FAIL: TestProtocolSession (0.00s)
=== RUN   TestParseErrors
    server_test.go:31: Parse("GET") error = <nil>, want an error
--- FAIL: TestParseErrors (0.00s)
FAIL
FAIL\texample.com/kvstore/internal/server\t0.010s
"""
GO_STORE = """=== RUN   TestSetGetDelete
    store_test.go:19: Get("a") = "", false; want "1", true
--- FAIL: TestSetGetDelete (0.00s)
=== RUN   TestExpiry
--- FAIL: TestExpiry (0.00s)
panic: not implemented [recovered]
\tpanic: not implemented

goroutine 5 [running]:
testing.tRunner.func1.2({0x5093e0, 0x559870})
\t/usr/lib/go-1.19/src/testing/testing.go:1396 +0x24e
FAIL\texample.com/kvstore/internal/store\t0.010s
"""
GO_FAILING = ["example.com/kvstore/internal/server::TestParseErrors",
              "example.com/kvstore/internal/server::TestProtocolSession",
              "example.com/kvstore/internal/store::TestExpiry",
              "example.com/kvstore/internal/store::TestSetGetDelete"]

CARGO_HEAD = """     Running tests/ring.rs (target/debug/deps/ring-8f46550582a6f26e)

running 4 tests
test overwrite_evicts_oldest_first ... ok
test {first} ... FAILED
test zero_capacity_is_rejected ... ok
test {second} ... FAILED

failures:

"""
CARGO_BLOCKS = {
    "pop_wraps_around": """---- pop_wraps_around stdout ----

thread 'pop_wraps_around' (19697) panicked at tests/ring.rs:32:9:
assertion `left == right` failed
  left: None
 right: Some(0)
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

""",
    "try_push_returns_the_item_when_full": """---- try_push_returns_the_item_when_full stdout ----

thread 'try_push_returns_the_item_when_full' (19698) panicked at tests/ring.rs:13:5:
assertion `left == right` failed
  left: Ok(())
 right: Err(Full('c'))

""",
}
CARGO_TAIL = """
failures:
    {first}
    {second}

test result: FAILED. 2 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--test ring`
"""

# vitest's default reporter: each file's tree as its worker finishes, then the failed tests
VITEST_TREE = {
    "set": """ ❯ test/set.test.ts (6 tests | 1 failed) 5ms
   × normalize > drops empty intervals 3ms
     → expected [ [ 1, 2 ], [ 3, 3 ] ] to deeply equal [ [ 1, 2 ] ]
""",
    "interval": """ ❯ test/interval.test.ts (4 tests | 1 failed) 4ms
   × measures > contains the start but not the end 2ms
     → expected false to be true // Object.is equality
""",
}
VITEST_FAILED = {
    "set": """ FAIL  test/set.test.ts > normalize > drops empty intervals
AssertionError: expected [ [ 1, 2 ], [ 3, 3 ] ] to deeply equal [ [ 1, 2 ] ]

- Expected
+ Received

 ❯ test/set.test.ts:12:40

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/2]⎯

""",
    "interval": """ FAIL  test/interval.test.ts > measures > contains the start but not the end
AssertionError: expected false to be true // Object.is equality

- Expected
+ Received

- true
+ false

 ❯ test/interval.test.ts:20:31

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[2/2]⎯

""",
}
VITEST_FAILING = ["test/set.test.ts > normalize > drops empty intervals",
                  "test/interval.test.ts > measures > contains the start but not the end"]

# jest with workers: each file's report as its worker finishes
JEST = {
    "sum": """FAIL test/sum.test.js
  ● math › adds two numbers

    expect(received).toBe(expected) // Object.is equality

    Expected: 5
    Received: 6

      3 | test('adds two numbers', () => {
    > 4 |   expect(add(2, 3)).toBe(5);
        |                     ^

      at Object.toBe (test/sum.test.js:4:21)

""",
    "div": """FAIL test/div.test.js
  ● math › divides by a power of two

    expect(received).toEqual(expected) // deep equality

    Expected: 0.25
    Received: 4

      at Object.toEqual (test/div.test.js:9:18)

""",
}
JEST_FAILING = ["test/sum.test.js > math > adds two numbers", "test/div.test.js > math > divides by a power of two"]

# rspec --order random: the numbered failures follow the run's order
RSPEC = {
    "money": """  {n}) Ledger::Money compares amounts
     Failure/Error: expect(eur(5)).to be < eur(7)
       expected: < #<Ledger::Money:0x00007f9c7bb0cb78 @cents=7, @currency="EUR">
            got:   #<Ledger::Money:0x00007f9c7bb0cd30 @cents=5, @currency="EUR">
     # ./spec/money_spec.rb:12:in `block (2 levels) in <top (required)>'

""",
    "loan": """  {n}) Ledger::Loan adds up the interest
     Failure/Error: expect(loan.total_interest).to eq(eur(1_250))

       expected: #<Ledger::Money:0x00007f9c7bb0aa10 @cents=1250, @currency="EUR">
            got: #<Ledger::Money:0x00007f9c7bb0ab28 @cents=1200, @currency="EUR">

       (compared using ==)
     # ./spec/loan_spec.rb:20:in `block (2 levels) in <top (required)>'

""",
}
RSPEC_FAILING = ["spec/money_spec.rb::Ledger::Money compares amounts",
                 "spec/loan_spec.rb::Ledger::Loan adds up the interest"]

# pytest -p xdist: the failures section follows the order the workers finished in
PYTEST = {
    "area": """___________________________________ test_area ___________________________________
[gw1] linux -- Python 3.12.3 /venv/bin/python

    def test_area():
>       assert area(3, 4) == 12
E       assert 7 == 12
E        +  where 7 = area(3, 4)

tests/test_geo.py:5: AssertionError
""",
    "limit": """_________________________________ test_limit __________________________________
[gw0] linux -- Python 3.12.3 /venv/bin/python

    def test_limit():
>       assert limit(9, 5) == 5
E       assert 9 == 5
E        +  where 9 = limit(9, 5)

tests/test_geo.py:9: AssertionError
""",
}
PYTEST_FAILING = ["tests/test_geo.py::test_limit", "tests/test_geo.py::test_area"]

# Maven surefire (-q, -DtrimStackTrace): classes in the order the file system lists them
MAVEN = {
    "stats": """[ERROR] Tests run: 9, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.018 s <<< FAILURE! \
-- in org.example.fraction.RunningStatsTest
[ERROR] org.example.fraction.RunningStatsTest.medianOfEvenCountAveragesTheMiddle -- Time elapsed: 0.036 s \
<<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <7/4> but was: <5/2>
\tat org.example.fraction.RunningStatsTest.medianOfEvenCountAveragesTheMiddle(RunningStatsTest.java:40)

""",
    "fraction": """[ERROR] Tests run: 17, Failures: 2, Errors: 0, Skipped: 0, Time elapsed: 0.383 s <<< FAILURE! \
-- in org.example.fraction.FractionTest
[ERROR] org.example.fraction.FractionTest.toDoubleAndToString -- Time elapsed: 0.010 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <5> but was: <5/2>
\tat org.example.fraction.FractionTest.toDoubleAndToString(FractionTest.java:94)

[ERROR] org.example.fraction.FractionTest.parsesTextForms(String, long, long)[3] -- Time elapsed: 0.012 s \
<<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <3/2> but was: <1>
\tat org.example.fraction.FractionTest.parsesTextForms(FractionTest.java:79)

[ERROR] org.example.fraction.FractionTest.parsesTextForms(String, long, long)[2] -- Time elapsed: 0.020 s \
<<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <-2> but was: <-1>
\tat org.example.fraction.FractionTest.parsesTextForms(FractionTest.java:79)

""",
}
MAVEN_SUMMARY = "[ERROR] Failures: \n" + """[ERROR]   FractionTest.parsesTextForms:79 expected: <-2> but was: <-1>
[ERROR]   FractionTest.parsesTextForms:79 expected: <3/2> but was: <1>
[ERROR]   FractionTest.toDoubleAndToString:94 expected: <5> but was: <5/2>
[ERROR]   RunningStatsTest.medianOfEvenCountAveragesTheMiddle:40 expected: <7/4> but was: <5/2>
[ERROR] Tests run: 26, Failures: 4, Errors: 0, Skipped: 0
"""
MAVEN_FAILING = ["org.example.fraction.RunningStatsTest#medianOfEvenCountAveragesTheMiddle",
                 "org.example.fraction.FractionTest#toDoubleAndToString",
                 "org.example.fraction.FractionTest#parsesTextForms(String, long, long)[2]",
                 "org.example.fraction.FractionTest#parsesTextForms(String, long, long)[3]"]


def _cargo(first: str, second: str) -> str:
    return (CARGO_HEAD.format(first=first, second=second) + CARGO_BLOCKS[first] + CARGO_BLOCKS[second]
            + CARGO_TAIL.format(first=first, second=second))


RUNS = {  # runner -> (output in one order, the same failures in another, FAIL_TO_PASS, the message)
    "go": (GO_SERVER + GO_STORE, GO_STORE + GO_SERVER, GO_FAILING, "server_test.go:31: Parse(\"GET\") error = "
           "<nil>, want an error"),
    "cargo": (_cargo("pop_wraps_around", "try_push_returns_the_item_when_full"),
              _cargo("try_push_returns_the_item_when_full", "pop_wraps_around"),
              ["tests/ring.rs::try_push_returns_the_item_when_full", "tests/ring.rs::pop_wraps_around"],
              "assertion `left == right` failed / left: None / right: Some(0)"),
    "vitest": (VITEST_TREE["set"] + VITEST_TREE["interval"] + VITEST_FAILED["set"] + VITEST_FAILED["interval"],
               VITEST_TREE["interval"] + VITEST_TREE["set"] + VITEST_FAILED["interval"] + VITEST_FAILED["set"],
               VITEST_FAILING, "AssertionError: expected false to be true // Object.is equality"),
    "jest": (JEST["sum"] + JEST["div"], JEST["div"] + JEST["sum"], JEST_FAILING,
             "Expected: 0.25 / Received: 4"),
    "rspec": ("Failures:\n\n" + RSPEC["money"].format(n=1) + RSPEC["loan"].format(n=2),
              "Failures:\n\n" + RSPEC["loan"].format(n=1) + RSPEC["money"].format(n=2), RSPEC_FAILING,
              "Failure/Error: expect(loan.total_interest).to eq(eur(1_250)) / expected: #<Ledger::Money:0x... "
              '@cents=1250, @currency="EUR"> / got: #<Ledger::Money:0x... @cents=1200, @currency="EUR">'),
    "pytest": ("=== FAILURES ===\n" + PYTEST["area"] + PYTEST["limit"],
               "=== FAILURES ===\n" + PYTEST["limit"] + PYTEST["area"], PYTEST_FAILING, "assert 7 == 12"),
    "maven": (MAVEN["stats"] + MAVEN["fraction"] + MAVEN_SUMMARY, MAVEN["fraction"] + MAVEN["stats"] + MAVEN_SUMMARY,
              MAVEN_FAILING, "org.opentest4j.AssertionFailedError: expected: <-2> but was: <-1>"),
}


@pytest.mark.parametrize("runner", sorted(RUNS))
def test_the_quoted_failure_is_the_same_in_either_order_and_the_first_failing_tests_own(runner):
    one, other, failing, message = RUNS[runner]
    one, other = stable_output(one), stable_output(other)  # as validation keeps it
    assert first_error(one, failing) == message
    assert first_error(other, failing) == message
    assert first_error(other, list(reversed(failing))) == message  # FAIL_TO_PASS's own order is not asked


def test_the_template_statement_reads_the_same_in_either_order():
    one, other, failing, message = RUNS["cargo"]
    texts = {template_statement("ringbuf-rs", sorted(failing), stable_output(out), "", set()).text
             for out in (one, other)}
    assert len(texts) == 1
    text = texts.pop()
    assert f"A failing test reports:\n\n    {message}\n" in text and "first failure" not in text


def test_the_first_failing_test_without_a_message_of_its_own_gives_way_to_the_next():
    """``TestAlpha`` fails with no message a statement can quote (its name, then the next
    test's): the next failing test in sorted order gives the message."""
    out = ("=== RUN   TestAlpha\n--- FAIL: TestAlpha (0.00s)\n=== RUN   TestBeta\n"
           "    x_test.go:9: Sum() = 4, want 5\n--- FAIL: TestBeta (0.00s)\n")
    assert first_error(out, ["pkg::TestAlpha", "pkg::TestBeta"]) == "x_test.go:9: Sum() = 4, want 5"


def test_an_output_naming_no_failing_test_gives_its_smallest_error_not_its_first():
    """A runner that prints no name above the message (or names that do not match the ids):
    the smallest error that starts a run of them, whatever the order; pytest's ``E`` lines
    still win over other lines, and a message's own continuation lines never stand alone."""
    a = "E       assert 9 == 5\nE        +  where 9 = limit(9, 5)\n\ntests/test_geo.py:9: AssertionError\n"
    b = "E       assert 7 == 12\nE        +  where 7 = area(3, 4)\n\ntests/test_geo.py:5: AssertionError\n"
    assert first_error(a + b, ["t::unnamed"]) == first_error(b + a) == "assert 7 == 12"
    go = "    a_test.go:3: got 2, want 3\n--- FAIL: TestA (0.00s)\n", \
        "    b_test.go:8: Len() = 0, want 1\n--- FAIL: TestB (0.00s)\n"
    assert first_error(go[0] + go[1]) == first_error(go[1] + go[0]) == "a_test.go:3: got 2, want 3"
    assert first_error("ok  \tpkg\t0.01s\nPASS\n", ["pkg::TestX"]) == ""


def test_a_test_leaf_is_its_own_name_without_parameters():
    assert leaf_name("tests/test_geo.py::TestGeo::test_area[1-2]") == "test_area"
    assert leaf_name("example.com/kv/store::TestParse/empty_input") == "empty_input"
    assert leaf_name("test/set.test.ts > normalize > drops empty intervals") == "drops empty intervals"
    assert leaf_name("org.example.FractionTest#parsesTextForms(String, long, long)[2]") == \
        "parsesTextForms(String, long, long)"
    assert leaf_name("src/lib.rs::stats::tests::mean_follows") == "mean_follows"
    assert leaf_name("suite > keeps [a] apart") == "keeps [a] apart"  # a bracket of the title's own


def test_object_addresses_do_not_reach_the_statement():
    """Ruby's and Python's inspect print an address that changes from run to run."""
    one = stable_output(RSPEC["money"].format(n=1))
    other = stable_output(RSPEC["money"].format(n=1).replace("7f9c7bb0c", "7f9fe3174"))
    assert one == other and "0x00007f9c" not in one and "#<Ledger::Money:0x... @cents=7" in one
    assert stable_output("<geo.Point object at 0x7f3a2c1d0e50>\nmask 0xdeadbeefcafe\n") == \
        "<geo.Point object at 0x...>\nmask 0xdeadbeefcafe\n"
