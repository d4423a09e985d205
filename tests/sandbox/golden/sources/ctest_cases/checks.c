/* Plain checks, one "[pass] name [expected][found]" line each (some names repeat);
   with "leak" every check passes and the program still fails at exit. */
#include <stdio.h>
#include <string.h>

static int failed;

static void check(const char *name, const char *expected, const char *found) {
    int ok = strcmp(expected, found) == 0;
    printf("[%s] %s [%s][%s]\n", ok ? "pass" : "fail", name, expected, found);
    failed += !ok;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "leak")) {
        check("Element test", "a", "a");
        printf("1 bytes leaked\n");
        return 2;
    }
    check("Element test", "a", "a");
    check("Element test", "b", "c");
    check("Reads <b> & \"q\" [x]", "[0xE]", "[0xE]");
    printf("Pass %d, Fail %d\n", 3 - failed, failed);
    return failed != 0;
}
