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

#ifndef WORDFREQ_COUNTER_H
#define WORDFREQ_COUNTER_H

#include <stddef.h>

/* One distinct word and how often it was seen. */
struct entry {
    char *word;
    size_t count;
    struct entry *next; /* chain within a hash bucket */
};

/* A hash table from words to counts that grows as it fills. */
struct counter {
    struct entry **buckets;
    size_t nbuckets;
    size_t nwords;
};

int counter_init(struct counter *c, size_t nbuckets);
void counter_free(struct counter *c);

/* Adds one occurrence of word (copied). Returns 0, or -1 when out of memory. */
int counter_add(struct counter *c, const char *word);

size_t counter_get(const struct counter *c, const char *word);

/* Fills out with up to n entries, most frequent first (ties by word).
 * Returns the number written. The entries stay owned by the counter. */
size_t counter_top(const struct counter *c, const struct entry **out, size_t n);

#endif
