/* Prints one "file:line:name:STATUS" line per case, the way Unity's runner reports them. */
#include <stdio.h>

static int failures;

static void report(int line, const char *name, const char *status, const char *why) {
    printf("%s:%d:%s:%s%s%s\n", __FILE__, line, name, status, why ? ": " : "", why ? why : "");
    if (status[0] == 'F') failures++;
}

int main(void) {
    report(__LINE__, "adds_small_numbers", "PASS", NULL);
    report(__LINE__, "adds_negative_numbers", "FAIL", "Expected -3 Was 3");
    report(__LINE__, "adds_large_numbers", "IGNORE", NULL);
    report(__LINE__, "subtracts", "PASS", NULL);
    printf("\n-----------------------\n4 Tests %d Failures 1 Ignored\n", failures);
    return failures != 0;
}
