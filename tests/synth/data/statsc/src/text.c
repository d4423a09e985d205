#include "text.h"

static int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n';
}

/* Words: runs of non-space characters. */
int count_words(const char *s) {
    int n = 0, in = 0;
    for (; *s; s++) {
        if (is_space(*s)) {
            in = 0;
        } else if (!in) {
            in = 1;
            n++;
        }
    }
    return n;
}

/* 1 when every letter is upper case. */
int is_upper_word(const char *s) {
    for (; *s; s++) {
        if (*s >= 'a' && *s <= 'z') {
            return 0;
        }
    }
    return 1;
}
