// A minimal test registry: each case is a named function; the runner executes one by name.
#pragma once

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace check {

using Case = void (*)();

/// Registers `fn` under `name`; returns true so it can initialise a static.
bool add(const char* name, Case fn);

struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void fail(const char* file, int line, const std::string& what) {
    std::ostringstream out;
    out << file << ":" << line << ": " << what;
    throw Failure(out.str());
}

}  // namespace check

#define CHECK_CONCAT2(a, b) a##b
#define CHECK_CONCAT(a, b) CHECK_CONCAT2(a, b)

#define TEST_CASE(fn, name)                                           \
    static void fn();                                                 \
    static const bool CHECK_CONCAT(registered_, fn) = check::add(name, fn); \
    static void fn()

#define CHECK(cond)                                                   \
    do {                                                              \
        if (!(cond)) check::fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
    } while (0)

#define CHECK_NEAR(a, b)                                              \
    do {                                                              \
        double check_a_ = (a), check_b_ = (b);                        \
        if (std::fabs(check_a_ - check_b_) > 1e-9) {                  \
            std::ostringstream check_msg_;                            \
            check_msg_ << #a " == " << check_a_ << ", expected " << check_b_; \
            check::fail(__FILE__, __LINE__, check_msg_.str());        \
        }                                                             \
    } while (0)

#define CHECK_THROWS(expr)                                            \
    do {                                                              \
        bool check_threw_ = false;                                    \
        try { (void)(expr); } catch (const std::exception&) { check_threw_ = true; } \
        if (!check_threw_) check::fail(__FILE__, __LINE__, "no exception from " #expr); \
    } while (0)
