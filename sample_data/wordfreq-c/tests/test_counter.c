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

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "../src/counter.h"
#include "../src/tokenize.h"

static void test_counts_and_growth(void)
{
    struct counter c;
    char word[16];
    assert(counter_init(&c, 2) == 0);
    for (int i = 0; i < 100; i++) {
        snprintf(word, sizeof word, "w%d", i % 40);
        assert(counter_add(&c, word) == 0);
    }
    assert(c.nwords == 40);
    assert(c.nbuckets > 2);
    assert(counter_get(&c, "w0") == 3);
    assert(counter_get(&c, "w39") == 2);
    assert(counter_get(&c, "missing") == 0);
    counter_free(&c);
}

static void test_tokenizer_and_top(void)
{
    const char text[] = "The cat's hat; the CAT, the dogs' bone -- 42 cats!";
    FILE *in = fmemopen((void *)text, sizeof text - 1, "r");
    struct counter c;
    char word[MAX_WORD];
    const struct entry *best[3];

    assert(in && counter_init(&c, 8) == 0);
    while (next_word(in, word) > 0)
        counter_add(&c, word);
    fclose(in);

    assert(counter_top(&c, best, 3) == 3);
    assert(strcmp(best[0]->word, "the") == 0 && best[0]->count == 3);
    assert(strcmp(best[1]->word, "42") == 0); /* ties sort by word */
    assert(counter_get(&c, "dogs") == 1);
    assert(counter_get(&c, "cat's") == 1);
    counter_free(&c);
}

int main(void)
{
    test_counts_and_growth();
    test_tokenizer_and_top();
    puts("all tests passed");
    return 0;
}
