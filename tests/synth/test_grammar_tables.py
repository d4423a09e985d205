"""Table tests of the generic strategies, one table per grammar: source in, expected source out,
fixed seed (pure tree-sitter, no toolchain)."""

from __future__ import annotations

import random
from textwrap import dedent

import pytest

from datagen.synth.entities import extract_entities
from datagen.synth.strategies.registry import get_strategy

PATHS = {"go": "kv/store.go", "rust": "src/lib.rs", "java": "src/main/java/Calc.java", "c": "src/calc.c",
         "cpp": "src/calc.cpp", "ruby": "lib/calc.rb", "php": "src/Calc.php"}


def src(text: str) -> str:
    return dedent(text).lstrip("\n")


# per language: (strategy, entity qualname, seed, source in, source out); out None = no site offered

GO = [
    ("op_change_v1", "Sum", 0, """
        package m

        func Sum(xs []int) int {
        \ttotal := 0
        \tfor _, x := range xs {
        \t\ttotal += x
        \t}
        \treturn total
        }
        """, """
        package m

        func Sum(xs []int) int {
        \ttotal := 0
        \tfor _, x := range xs {
        \t\ttotal -= x
        \t}
        \treturn total
        }
        """),
    ("compare_change_v1", "Max", 0, """
        package m

        func Max(a, b int) int {
        \tif a > b {
        \t\treturn a
        \t}
        \treturn b
        }
        """, """
        package m

        func Max(a, b int) int {
        \tif a >= b {
        \t\treturn a
        \t}
        \treturn b
        }
        """),
    ("swap_operands_v1", "Diff", 0, """
        package m

        func Diff(a, b int) int {
        \treturn a - b
        }
        """, """
        package m

        func Diff(a, b int) int {
        \treturn b - a
        }
        """),
    ("bool_chain_v1", "Ok", 0, """
        package m

        func Ok(a, b bool) bool {
        \treturn a && b
        }
        """, """
        package m

        func Ok(a, b bool) bool {
        \treturn b
        }
        """),
    ("off_by_one_v1", "Last", 0, """
        package m

        func Last(xs []int) int {
        \treturn xs[len(xs)-1]
        }
        """, """
        package m

        func Last(xs []int) int {
        \treturn xs[(len(xs) - 1)-1]
        }
        """),
    ("constant_change_v1", "Name", 0, """
        package m

        func Name() string {
        \treturn "kv"
        }
        """, """
        package m

        func Name() string {
        \treturn "kv_"
        }
        """),
    ("swap_args_v1", "Pair", 0, """
        package m

        func Pair(a, b int) int {
        \treturn sub(a, b)
        }
        """, """
        package m

        func Pair(a, b int) int {
        \treturn sub(b, a)
        }
        """),
    ("swap_args_v1", "Push", 0, """
        package m

        func Push(xs []int, x int) []int {
        \treturn append(xs, x)
        }
        """, None),
    ("invert_if_v1", "Store.Get", 0, """
        package m

        func (s *Store) Get(k string) (string, bool) {
        \tif v, ok := s.m[k]; ok {
        \t\treturn v, true
        \t}
        \treturn "", false
        }
        """, """
        package m

        func (s *Store) Get(k string) (string, bool) {
        \tif v, ok := s.m[k]; !ok {
        \t\treturn v, true
        \t}
        \treturn "", false
        }
        """),
    ("remove_assign_v1", "Store.Set", 0, """
        package m

        func (s *Store) Set(k, v string) {
        \ts.m[k] = v
        \ts.n++
        }
        """, """
        package m

        func (s *Store) Set(k, v string) {
        \ts.n++
        }
        """),
    ("remove_guard_v1", "Store.Get", 0, """
        package m

        func (s *Store) Get(k string) string {
        \tif s == nil {
        \t\treturn ""
        \t}
        \treturn s.m[k]
        }
        """, """
        package m

        func (s *Store) Get(k string) string {
        \treturn s.m[k]
        }
        """),
    ("remove_cond_v1", "Store.Put", 0, """
        package m

        func (s *Store) Put(k string) {
        \tif s.m == nil {
        \t\ts.m = map[string]int{}
        \t}
        \ts.m[k]++
        }
        """, """
        package m

        func (s *Store) Put(k string) {
        \ts.m[k]++
        }
        """),
    ("remove_cond_v1", "Reply", 0, """
        package m

        func Reply(line string) string {
        \treply, err := parse(line)
        \tif err != nil {
        \t\treply = "ERR"
        \t}
        \tif _, err := write(reply); err != nil {
        \t\treturn ""
        \t}
        \treturn reply
        }
        """, None),
    ("remove_guard_v1", "Reply", 0, """
        package m

        func Reply(line string) string {
        \treply, err := parse(line)
        \tif err != nil {
        \t\treply = "ERR"
        \t}
        \tif _, err := write(reply); err != nil {
        \t\treturn ""
        \t}
        \treturn reply
        }
        """, """
        package m

        func Reply(line string) string {
        \treply, err := parse(line)
        \tif err != nil {
        \t\treply = "ERR"
        \t}
        \treturn reply
        }
        """),
    ("remove_loop_v1", "Count", 0, """
        package m

        func Count(xs []int) int {
        \tn := 0
        \tfor range xs {
        \t\tn++
        \t}
        \treturn n
        }
        """, """
        package m

        func Count(xs []int) int {
        \tn := 0
        \treturn n
        }
        """),
    ("remove_return_v1", "Find", 0, """
        package m

        func Find(xs []int, y int) int {
        \tfor i, x := range xs {
        \t\tif x == y {
        \t\t\treturn i
        \t\t}
        \t}
        \treturn -1
        }
        """, None),
    ("remove_return_v1", "Find", 0, """
        package m

        func Find(xs []int, y int) (idx int) {
        \tidx = -1
        \tfor i, x := range xs {
        \t\tif x == y {
        \t\t\tidx = i
        \t\t\treturn
        \t\t}
        \t}
        \treturn
        }
        """, """
        package m

        func Find(xs []int, y int) (idx int) {
        \tidx = -1
        \tfor i, x := range xs {
        \t\tif x == y {
        \t\t\tidx = i
        \t\t}
        \t}
        \treturn
        }
        """),
    ("op_change_v1", "Key", 0, """
        package m

        func Key(k string) string {
        \treturn "k=" + k
        }
        """, None),
    ("empty_body_v1", "Store.Len", 0, """
        package m

        // Len is the number of keys.
        func (s *Store) Len() int {
        \treturn len(s.m)
        }
        """, """
        package m

        // Len is the number of keys.
        func (s *Store) Len() int {
        \tpanic("not implemented")
        }
        """),
    ("empty_body_v1", "Atoi", 0, """
        package m

        import "strconv"

        func Atoi(s string) int {
        \tn, _ := strconv.Atoi(s)
        \treturn n
        }
        """, None),
    ("remove_function_v1", "reset", 0, """
        package m

        func reset(s *Store) {
        \ts.m = nil
        }

        func Close(s *Store) {
        \treset(s)
        \ts.closed = true
        }
        """, """
        package m

        func Close(s *Store) {
        \ts.closed = true
        }
        """),
]

RUST = [
    ("op_change_v1", "area", 0, """
        pub fn area(w: u32, h: u32) -> u32 {
            w * h
        }
        """, """
        pub fn area(w: u32, h: u32) -> u32 {
            w / h
        }
        """),
    ("compare_change_v1", "RingBuf.is_full", 0, """
        impl RingBuf {
            pub fn is_full(&self) -> bool {
                self.len == self.cap
            }
        }
        """, """
        impl RingBuf {
            pub fn is_full(&self) -> bool {
                self.len != self.cap
            }
        }
        """),
    ("swap_operands_v1", "gap", 0, """
        fn gap(a: i64, b: i64) -> i64 {
            a - b
        }
        """, """
        fn gap(a: i64, b: i64) -> i64 {
            b - a
        }
        """),
    ("bool_chain_v1", "valid", 0, """
        fn valid(a: bool, b: bool) -> bool {
            a || b
        }
        """, """
        fn valid(a: bool, b: bool) -> bool {
            b
        }
        """),
    ("off_by_one_v1", "RingBuf.last", 0, """
        impl RingBuf {
            fn last(&self) -> usize {
                self.items.len() - 1
            }
        }
        """, """
        impl RingBuf {
            fn last(&self) -> usize {
                (self.items.len() - 1) - 1
            }
        }
        """),
    ("constant_change_v1", "label", 0, """
        fn label() -> &'static str {
            "ring"
        }
        """, """
        fn label() -> &'static str {
            "ring_"
        }
        """),
    ("swap_args_v1", "RingBuf.wrap", 0, """
        impl RingBuf {
            fn wrap(&self, i: usize) -> usize {
                modulo(i, self.cap)
            }
        }
        """, """
        impl RingBuf {
            fn wrap(&self, i: usize) -> usize {
                modulo(self.cap, i)
            }
        }
        """),
    ("invert_if_v1", "sign", 0, """
        fn sign(x: i32) -> i32 {
            if x < 0 {
                -1
            } else {
                1
            }
        }
        """, """
        fn sign(x: i32) -> i32 {
            if !(x < 0) {
                -1
            } else {
                1
            }
        }
        """),
    ("remove_assign_v1", "RingBuf.clear", 0, """
        impl RingBuf {
            fn clear(&mut self) {
                self.len = 0;
                self.head = 0;
            }
        }
        """, """
        impl RingBuf {
            fn clear(&mut self) {
                self.head = 0;
            }
        }
        """),
    ("remove_guard_v1", "RingBuf.pop", 0, """
        impl RingBuf {
            fn pop(&mut self) -> Option<u8> {
                if self.len == 0 {
                    return None;
                }
                self.len -= 1;
                Some(self.items[self.len])
            }
        }
        """, """
        impl RingBuf {
            fn pop(&mut self) -> Option<u8> {
                self.len -= 1;
                Some(self.items[self.len])
            }
        }
        """),
    ("remove_loop_v1", "total", 0, """
        fn total(xs: &[u32]) -> u32 {
            let mut t = 0;
            for x in xs {
                t += x;
            }
            t
        }
        """, """
        fn total(xs: &[u32]) -> u32 {
            let mut t = 0;
            t
        }
        """),
    ("empty_body_v1", "RingBuf.len", 0, """
        impl RingBuf {
            /// The number of items.
            pub fn len(&self) -> usize {
                self.len
            }
        }
        """, """
        impl RingBuf {
            /// The number of items.
            pub fn len(&self) -> usize {
                todo!()
            }
        }
        """),
    ("remove_method_v1", "RingBuf", 0, """
        impl RingBuf {
            fn a(&self) -> u8 {
                1
            }

            fn b(&self) -> u8 {
                2
            }
        }
        """, """
        impl RingBuf {
            fn b(&self) -> u8 {
                2
            }
        }
        """),
    ("invert_if_v1", "first", 0, """
        fn first(o: Option<u8>) -> u8 {
            if let Some(x) = o {
                return x;
            }
            0
        }
        """, None),
    ("constant_change_v1", "show", 0, """
        fn show(x: &str) {
            println!("{}", x);
        }
        """, None),
    ("remove_method_v1", "Ring", 0, """
        impl fmt::Display for Ring {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "ring")
            }
        }
        """, None),
    ("remove_function_v1", "Ring.fmt", 0, """
        impl fmt::Display for Ring {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "ring")
            }
        }
        """, None),
    ("remove_function_v1", "clear", 0, """
        fn clear(v: &mut Vec<u8>) {
            v.clear();
        }

        #[cfg(test)]
        mod tests {
            #[test]
            fn clears() {
                let mut v = vec![1];
                super::clear(&mut v);
                assert!(v.is_empty());
            }
        }
        """, """
        #[cfg(test)]
        mod tests {
            #[test]
            fn clears() {
                let mut v = vec![1];
                super::clear(&mut v);
                assert!(v.is_empty());
            }
        }
        """),
    ("remove_function_v1", "helper", 0, """
        fn helper(v: &mut Vec<u8>) {
            v.clear();
        }

        pub fn run(v: &mut Vec<u8>) {
            helper(v);
            v.push(1);
        }

        #[cfg(test)]
        mod tests {
            #[test]
            fn runs() {}
        }
        """, """
        pub fn run(v: &mut Vec<u8>) {
            v.push(1);
        }

        #[cfg(test)]
        mod tests {
            #[test]
            fn runs() {}
        }
        """),
]

JAVA = [
    ("op_change_v1", "Calc.mul", 0, """
        class Calc {
          int mul(int a, int b) {
            return a * b;
          }
        }
        """, """
        class Calc {
          int mul(int a, int b) {
            return a / b;
          }
        }
        """),
    ("compare_change_v1", "Calc.isEmpty", 0, """
        class Calc {
          boolean isEmpty(String s) {
            return s.length() == 0;
          }
        }
        """, """
        class Calc {
          boolean isEmpty(String s) {
            return s.length() != 0;
          }
        }
        """),
    ("swap_operands_v1", "Calc.div", 0, """
        class Calc {
          int div(int a, int b) {
            return a / b;
          }
        }
        """, """
        class Calc {
          int div(int a, int b) {
            return b / a;
          }
        }
        """),
    ("bool_chain_v1", "Calc.both", 0, """
        class Calc {
          boolean both(boolean a, boolean b) {
            return a && b;
          }
        }
        """, """
        class Calc {
          boolean both(boolean a, boolean b) {
            return b;
          }
        }
        """),
    ("off_by_one_v1", "Calc.last", 0, """
        class Calc {
          int last(int[] xs) {
            return xs[xs.length - 1];
          }
        }
        """, """
        class Calc {
          int last(int[] xs) {
            return xs[(xs.length - 1) - 1];
          }
        }
        """),
    ("constant_change_v1", "Calc.limit", 0, """
        class Calc {
          long limit() {
            return 64L;
          }
        }
        """, """
        class Calc {
          long limit() {
            return 128L;
          }
        }
        """),
    ("swap_args_v1", "Calc.pow", 0, """
        class Calc {
          double pow(double a, double b) {
            return Math.pow(a, b);
          }
        }
        """, """
        class Calc {
          double pow(double a, double b) {
            return Math.pow(b, a);
          }
        }
        """),
    ("invert_if_v1", "Calc.abs", 0, """
        class Calc {
          int abs(int x) {
            if (x < 0) {
              return -x;
            }
            return x;
          }
        }
        """, """
        class Calc {
          int abs(int x) {
            if (!(x < 0)) {
              return -x;
            }
            return x;
          }
        }
        """),
    ("remove_assign_v1", "Counter.inc", 0, """
        class Counter {
          void inc() {
            count++;
            this.touched = true;
          }
        }
        """, """
        class Counter {
          void inc() {
            this.touched = true;
          }
        }
        """),
    ("remove_guard_v1", "Calc.safeDiv", 0, """
        class Calc {
          int safeDiv(int a, int b) {
            if (b == 0) {
              throw new ArithmeticException("zero");
            }
            return a / b;
          }
        }
        """, """
        class Calc {
          int safeDiv(int a, int b) {
            return a / b;
          }
        }
        """),
    ("remove_cond_v1", "Calc.clamp", 0, """
        class Calc {
          int clamp(int x) {
            if (x > 10) {
              x = 10;
            }
            return x;
          }
        }
        """, """
        class Calc {
          int clamp(int x) {
            return x;
          }
        }
        """),
    ("remove_loop_v1", "Calc.sum", 0, """
        class Calc {
          int sum(int[] xs) {
            int t = 0;
            for (int x : xs) {
              t += x;
            }
            return t;
          }
        }
        """, """
        class Calc {
          int sum(int[] xs) {
            int t = 0;
            return t;
          }
        }
        """),
    ("remove_return_v1", "Calc.index", 0, """
        class Calc {
          int index(int[] xs, int y) {
            for (int i = 0; i < xs.length; i++) {
              if (xs[i] == y) {
                return i;
              }
            }
            return -1;
          }
        }
        """, """
        class Calc {
          int index(int[] xs, int y) {
            for (int i = 0; i < xs.length; i++) {
              if (xs[i] == y) {
              }
            }
            return -1;
          }
        }
        """),
    ("empty_body_v1", "Calc.twice", 0, """
        class Calc {
          /** Twice x. */
          int twice(int x) {
            return 2 * x;
          }
        }
        """, """
        class Calc {
          /** Twice x. */
          int twice(int x) {
            throw new UnsupportedOperationException("not implemented");
          }
        }
        """),
    ("remove_method_v1", "Calc", 0, """
        class Calc {
          int one() {
            return 1;
          }

          int two() {
            return 2;
          }
        }
        """, """
        class Calc {
          int two() {
            return 2;
          }
        }
        """),
]

C = [
    ("op_change_v1", "add", 0, """
        int add(int a, int b) {
            return a + b;
        }
        """, """
        int add(int a, int b) {
            return a - b;
        }
        """),
    ("compare_change_v1", "is_neg", 0, """
        int is_neg(int x) {
            return x < 0;
        }
        """, """
        int is_neg(int x) {
            return x <= 0;
        }
        """),
    ("swap_operands_v1", "half", 0, """
        int half(int x) {
            return x >> 1;
        }
        """, """
        int half(int x) {
            return 1 >> x;
        }
        """),
    ("bool_chain_v1", "in_range", 0, """
        int in_range(int x) {
            return x >= 0 && x < 10;
        }
        """, """
        int in_range(int x) {
            return x < 10;
        }
        """),
    ("off_by_one_v1", "count", 0, """
        int count(const char *s) {
            int n = 0;
            for (int i = 0; s[i]; i++) {
                n++;
            }
            return n;
        }
        """, """
        int count(const char *s) {
            int n = 1;
            for (int i = 0; s[i]; i++) {
                n++;
            }
            return n;
        }
        """),
    ("constant_change_v1", "greeting", 0, """
        const char *greeting(void) {
            return "hello";
        }
        """, """
        const char *greeting(void) {
            return "hello_";
        }
        """),
    ("swap_args_v1", "copy", 0, """
        void copy(char *dst, const char *src, size_t n) {
            memcpy(dst, src, n);
        }
        """, """
        void copy(char *dst, const char *src, size_t n) {
            memcpy(dst, n, src);
        }
        """),
    ("invert_if_v1", "sign", 0, """
        int sign(int x) {
            if (x < 0) {
                return -1;
            } else {
                return 1;
            }
        }
        """, """
        int sign(int x) {
            if (!(x < 0)) {
                return -1;
            } else {
                return 1;
            }
        }
        """),
    ("remove_assign_v1", "reset", 0, """
        void reset(struct counter *c) {
            c->n = 0;
            c->total = 0;
        }
        """, """
        void reset(struct counter *c) {
            c->total = 0;
        }
        """),
    ("remove_guard_v1", "length", 0, """
        size_t length(const char *s) {
            if (s == NULL) {
                return 0;
            }
            return strlen(s);
        }
        """, """
        size_t length(const char *s) {
            return strlen(s);
        }
        """),
    ("remove_loop_v1", "sum", 0, """
        int sum(const int *xs, int n) {
            int t = 0;
            while (n-- > 0) {
                t += xs[n];
            }
            return t;
        }
        """, """
        int sum(const int *xs, int n) {
            int t = 0;
            return t;
        }
        """),
    ("empty_body_v1", "square", 0, """
        /* The square of x. */
        static int square(int x) {
            return x * x;
        }
        """, """
        /* The square of x. */
        static int square(int x) {
            __builtin_trap(); /* not implemented */
        }
        """),
    ("remove_function_v1", "log_line", 0, """
        static void log_line(const char *s) {
            puts(s);
        }

        int run(void) {
            log_line("start");
            return 0;
        }
        """, """
        int run(void) {
            return 0;
        }
        """),
]

CPP = [
    ("op_change_v1", "Vec.dot", 0, """
        struct Vec {
          int x, y;
          int dot(const Vec& o) const {
            return x * o.x + y * o.y;
          }
        };
        """, """
        struct Vec {
          int x, y;
          int dot(const Vec& o) const {
            return x * o.x - y * o.y;
          }
        };
        """),
    ("compare_change_v1", "Stack.empty", 0, """
        class Stack {
         public:
          bool empty() const { return size_ == 0; }
        };
        """, """
        class Stack {
         public:
          bool empty() const { return size_ != 0; }
        };
        """),
    ("swap_operands_v1", "ratio", 0, """
        double ratio(double a, double b) {
          return a / b;
        }
        """, """
        double ratio(double a, double b) {
          return b / a;
        }
        """),
    ("bool_chain_v1", "ok", 0, """
        bool ok(bool a, bool b) {
          return a || b;
        }
        """, """
        bool ok(bool a, bool b) {
          return b;
        }
        """),
    ("off_by_one_v1", "Stack.top", 0, """
        int Stack::top() const {
          return items_[items_.size() - 1];
        }
        """, """
        int Stack::top() const {
          return items_[(items_.size() - 1) - 1];
        }
        """),
    ("constant_change_v1", "enabled", 0, """
        bool enabled() {
          return true;
        }
        """, """
        bool enabled() {
          return false;
        }
        """),
    ("swap_args_v1", "lo", 0, """
        int lo(int a, int b) {
          return std::min(a, b);
        }
        """, """
        int lo(int a, int b) {
          return std::min(b, a);
        }
        """),
    ("invert_if_v1", "Stack.pop", 0, """
        void Stack::pop() {
          if (!items_.empty()) {
            items_.pop_back();
          }
        }
        """, """
        void Stack::pop() {
          if (items_.empty()) {
            items_.pop_back();
          }
        }
        """),
    ("remove_assign_v1", "Stack.clear", 0, """
        void Stack::clear() {
          size_ = 0;
          items_.clear();
        }
        """, """
        void Stack::clear() {
          items_.clear();
        }
        """),
    ("remove_guard_v1", "Stack.at", 0, """
        int Stack::at(size_t i) const {
          if (i >= items_.size()) {
            throw std::out_of_range("at");
          }
          return items_[i];
        }
        """, """
        int Stack::at(size_t i) const {
          return items_[i];
        }
        """),
    ("remove_loop_v1", "total", 0, """
        int total(const std::vector<int>& xs) {
          int t = 0;
          for (int x : xs) {
            t += x;
          }
          return t;
        }
        """, """
        int total(const std::vector<int>& xs) {
          int t = 0;
          return t;
        }
        """),
    ("empty_body_v1", "geo.area", 0, """
        namespace geo {
        int area(int w, int h) {
          return w * h;
        }
        }  // namespace geo
        """, """
        namespace geo {
        int area(int w, int h) {
          throw "not implemented";
        }
        }  // namespace geo
        """),
    ("remove_method_v1", "Stack", 0, """
        class Stack {
         public:
          int a() const { return 1; }
          int b() const { return 2; }
        };
        """, """
        class Stack {
         public:
          int b() const { return 2; }
        };
        """),
]

RUBY = [
    ("op_change_v1", "Calc.add", 0, """
        class Calc
          def add(a, b)
            a + b
          end
        end
        """, """
        class Calc
          def add(a, b)
            a - b
          end
        end
        """),
    ("compare_change_v1", "Calc.positive?", 0, """
        class Calc
          def positive?(x)
            x > 0
          end
        end
        """, """
        class Calc
          def positive?(x)
            x >= 0
          end
        end
        """),
    ("swap_operands_v1", "Calc.sub", 0, """
        class Calc
          def sub(a, b)
            a - b
          end
        end
        """, """
        class Calc
          def sub(a, b)
            b - a
          end
        end
        """),
    ("bool_chain_v1", "Calc.both", 0, """
        class Calc
          def both(a, b)
            a && b
          end
        end
        """, """
        class Calc
          def both(a, b)
            b
          end
        end
        """),
    ("off_by_one_v1", "Calc.last", 0, """
        class Calc
          def last(xs)
            xs[xs.length - 1]
          end
        end
        """, """
        class Calc
          def last(xs)
            xs[(xs.length - 1) - 1]
          end
        end
        """),
    ("constant_change_v1", "Calc.name", 0, """
        class Calc
          def name
            "calc"
          end
        end
        """, """
        class Calc
          def name
            "calc_"
          end
        end
        """),
    ("swap_args_v1", "Calc.pair", 0, """
        class Calc
          def pair(a, b)
            format("%s-%s", a, b)
          end
        end
        """, """
        class Calc
          def pair(a, b)
            format("%s-%s", b, a)
          end
        end
        """),
    ("invert_if_v1", "Calc.check", 0, """
        class Calc
          def check(x)
            raise ArgumentError, "neg" unless x >= 0
            x
          end
        end
        """, """
        class Calc
          def check(x)
            raise ArgumentError, "neg" unless !(x >= 0)
            x
          end
        end
        """),
    ("remove_assign_v1", "Calc.initialize", 0, """
        class Calc
          def initialize
            @total = 0
            @count = 0
          end
        end
        """, """
        class Calc
          def initialize
            @count = 0
          end
        end
        """),
    ("remove_guard_v1", "Calc.first", 0, """
        class Calc
          def first(xs)
            return nil if xs.empty?
            xs[0]
          end
        end
        """, """
        class Calc
          def first(xs)
            xs[0]
          end
        end
        """),
    ("remove_cond_v1", "Calc.note", 0, """
        class Calc
          def note(x)
            if x > 10
              @big = true
            end
            x
          end
        end
        """, """
        class Calc
          def note(x)
            x
          end
        end
        """),
    ("remove_loop_v1", "Calc.drain", 0, """
        class Calc
          def drain(q)
            until q.empty?
              q.pop
            end
            q
          end
        end
        """, """
        class Calc
          def drain(q)
            q
          end
        end
        """),
    ("empty_body_v1", "Calc.twice", 0, """
        class Calc
          # Twice x.
          def twice(x)
            y = x * 2
            y
          end
        end
        """, """
        class Calc
          # Twice x.
          def twice(x)
            raise NotImplementedError
          end
        end
        """),
    ("remove_method_v1", "Calc", 0, """
        class Calc
          def one
            1
          end

          def two
            2
          end
        end
        """, """
        class Calc
          def two
            2
          end
        end
        """),
]

PHP = [
    ("op_change_v1", "Calc.mul", 0, """
        <?php
        class Calc {
            public function mul($a, $b) {
                return $a * $b;
            }
        }
        """, """
        <?php
        class Calc {
            public function mul($a, $b) {
                return $a / $b;
            }
        }
        """),
    ("compare_change_v1", "Calc.same", 0, """
        <?php
        class Calc {
            public function same($a, $b) {
                return $a === $b;
            }
        }
        """, """
        <?php
        class Calc {
            public function same($a, $b) {
                return $a !== $b;
            }
        }
        """),
    ("swap_operands_v1", "Calc.sub", 0, """
        <?php
        class Calc {
            public function sub($a, $b) {
                return $a - $b;
            }
        }
        """, """
        <?php
        class Calc {
            public function sub($a, $b) {
                return $b - $a;
            }
        }
        """),
    ("bool_chain_v1", "either", 0, """
        <?php
        function either($a, $b) {
            return $a || $b;
        }
        """, """
        <?php
        function either($a, $b) {
            return $b;
        }
        """),
    ("off_by_one_v1", "last", 0, """
        <?php
        function last(array $xs) {
            return $xs[count($xs) - 1];
        }
        """, """
        <?php
        function last(array $xs) {
            return $xs[(count($xs) - 1) - 1];
        }
        """),
    ("constant_change_v1", "label", 0, """
        <?php
        function label() {
            return 'calc';
        }
        """, """
        <?php
        function label() {
            return 'calc_';
        }
        """),
    ("swap_args_v1", "join_all", 0, """
        <?php
        function join_all($a, $b) {
            return implode($a, $b);
        }
        """, """
        <?php
        function join_all($a, $b) {
            return implode($b, $a);
        }
        """),
    ("invert_if_v1", "Calc.abs", 0, """
        <?php
        class Calc {
            public function abs(int $x): int {
                if ($x < 0) {
                    return -$x;
                }
                return $x;
            }
        }
        """, """
        <?php
        class Calc {
            public function abs(int $x): int {
                if (!($x < 0)) {
                    return -$x;
                }
                return $x;
            }
        }
        """),
    ("remove_assign_v1", "Calc.__construct", 0, """
        <?php
        class Calc {
            public function __construct() {
                $this->total = 0;
                $this->count = 0;
            }
        }
        """, """
        <?php
        class Calc {
            public function __construct() {
                $this->count = 0;
            }
        }
        """),
    ("remove_guard_v1", "Calc.div", 0, """
        <?php
        class Calc {
            public function div($a, $b) {
                if ($b == 0) {
                    throw new \\InvalidArgumentException("zero");
                }
                return $a / $b;
            }
        }
        """, """
        <?php
        class Calc {
            public function div($a, $b) {
                return $a / $b;
            }
        }
        """),
    ("remove_loop_v1", "total", 0, """
        <?php
        function total(array $xs) {
            $t = 0;
            foreach ($xs as $x) {
                $t += $x;
            }
            return $t;
        }
        """, """
        <?php
        function total(array $xs) {
            $t = 0;
            return $t;
        }
        """),
    ("empty_body_v1", "Calc.twice", 0, """
        <?php
        class Calc {
            /** Twice x. */
            public function twice(int $x): int {
                return 2 * $x;
            }
        }
        """, """
        <?php
        class Calc {
            /** Twice x. */
            public function twice(int $x): int {
                throw new \\RuntimeException("not implemented");
            }
        }
        """),
    ("remove_method_v1", "Calc", 0, """
        <?php
        class Calc {
            public function one() {
                return 1;
            }

            public function two() {
                return 2;
            }
        }
        """, """
        <?php
        class Calc {
            public function two() {
                return 2;
            }
        }
        """),
]

TABLES = {"go": GO, "rust": RUST, "java": JAVA, "c": C, "cpp": CPP, "ruby": RUBY, "php": PHP}
CASES = [(lang, *case) for lang, table in TABLES.items() for case in table]


def mutate(strategy: str, source: str, qualname: str, lang: str, seed: int) -> str | None:
    found = [e for e in extract_entities(PATHS[lang], source, lang) if e.qualname == qualname]
    assert found, f"no entity {qualname!r}"
    return get_strategy(strategy).transform(source, found[0], random.Random(seed))


@pytest.mark.parametrize(("lang", "strategy", "qualname", "seed", "before", "after"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_grammar_mutation(lang: str, strategy: str, qualname: str, seed: int, before: str, after: str | None) -> None:
    expected = None if after is None else src(after)
    assert mutate(strategy, src(before), qualname, lang, seed) == expected


@pytest.mark.parametrize("lang", sorted(TABLES))
def test_every_table_covers_ten_kinds(lang: str) -> None:
    made = {case[0] for case in TABLES[lang] if case[4] is not None}
    assert len(made) >= 10, sorted(made)
