// Prints GoogleTest's console lines for four cases; with "crash" it aborts inside the third.
#include <cstdio>
#include <cstdlib>
#include <cstring>

static void run(const char *name, const char *end) {
    std::printf("[ RUN      ] %s\n", name);
    if (end) std::printf("%s %s (0 ms)\n", end, name);
}

int main(int argc, char **argv) {
    bool crash = argc > 1 && !std::strcmp(argv[1], "crash");
    std::printf("[==========] Running 4 tests from 2 test suites.\n");
    run("Vec.Adds", "[       OK ]");
    run("Vec.Scales", "[  FAILED  ]");
    std::fflush(stdout);
    if (crash) { run("Param/Vec.Norm/0", nullptr); std::fflush(stdout); std::abort(); }
    run("Param/Vec.Norm/0", "[       OK ]");
    run("Vec.Later", "[  SKIPPED ]");
    std::printf("[  FAILED  ] 1 test, listed below:\n[  FAILED  ] Vec.Scales\n");
    return 1;
}
