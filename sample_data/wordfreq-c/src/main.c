/*
 * wordfreq - count the words in text files.
 * Copyright (C) 2024  The wordfreq authors
 *
 * This program is free software: you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation, either version 3 of the License, or
 * (at your option) any later version.
 *
 * This program is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 * GNU General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with this program.  If not, see <https://www.gnu.org/licenses/>.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counter.h"
#include "tokenize.h"

static int count_stream(FILE *in, struct counter *c)
{
    char word[MAX_WORD];
    while (next_word(in, word) > 0)
        if (counter_add(c, word) != 0)
            return -1;
    return 0;
}

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [-n TOP] [FILE...]\n", prog);
}

int main(int argc, char **argv)
{
    size_t top = 10;
    int first = 1;

    if (argc > 2 && strcmp(argv[1], "-n") == 0) {
        char *end;
        top = strtoul(argv[2], &end, 10);
        if (*end != '\0' || top == 0) {
            usage(argv[0]);
            return 2;
        }
        first = 3;
    }

    struct counter c;
    if (counter_init(&c, 256) != 0) {
        perror("wordfreq");
        return 1;
    }

    int status = 0;
    if (first == argc && count_stream(stdin, &c) != 0)
        status = 1;
    for (int i = first; i < argc; i++) {
        FILE *in = fopen(argv[i], "r");
        if (!in) {
            fprintf(stderr, "wordfreq: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        if (count_stream(in, &c) != 0)
            status = 1;
        fclose(in);
    }

    const struct entry **best = malloc(top * sizeof *best);
    size_t n = best ? counter_top(&c, best, top) : 0;
    for (size_t i = 0; i < n; i++)
        printf("%7zu %s\n", best[i]->count, best[i]->word);

    free(best);
    counter_free(&c);
    return status;
}
