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

#include "counter.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a: small, fast and good enough for word keys. */
static uint64_t hash_word(const char *word)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)word; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    return h;
}

int counter_init(struct counter *c, size_t nbuckets)
{
    c->buckets = calloc(nbuckets, sizeof *c->buckets);
    c->nbuckets = nbuckets;
    c->nwords = 0;
    return c->buckets ? 0 : -1;
}

void counter_free(struct counter *c)
{
    for (size_t i = 0; i < c->nbuckets; i++) {
        struct entry *e = c->buckets[i];
        while (e) {
            struct entry *next = e->next;
            free(e->word);
            free(e);
            e = next;
        }
    }
    free(c->buckets);
    c->buckets = NULL;
    c->nbuckets = c->nwords = 0;
}

static int grow(struct counter *c)
{
    size_t nbuckets = c->nbuckets * 2;
    struct entry **buckets = calloc(nbuckets, sizeof *buckets);
    if (!buckets)
        return -1;
    for (size_t i = 0; i < c->nbuckets; i++) {
        struct entry *e = c->buckets[i];
        while (e) {
            struct entry *next = e->next;
            size_t slot = hash_word(e->word) % nbuckets;
            e->next = buckets[slot];
            buckets[slot] = e;
            e = next;
        }
    }
    free(c->buckets);
    c->buckets = buckets;
    c->nbuckets = nbuckets;
    return 0;
}

int counter_add(struct counter *c, const char *word)
{
    size_t slot = hash_word(word) % c->nbuckets;
    for (struct entry *e = c->buckets[slot]; e; e = e->next) {
        if (strcmp(e->word, word) == 0) {
            e->count++;
            return 0;
        }
    }
    if (c->nwords >= c->nbuckets * 3 / 4) {
        if (grow(c) != 0)
            return -1;
        slot = hash_word(word) % c->nbuckets;
    }
    struct entry *e = malloc(sizeof *e);
    if (!e || !(e->word = strdup(word))) {
        free(e);
        return -1;
    }
    e->count = 1;
    e->next = c->buckets[slot];
    c->buckets[slot] = e;
    c->nwords++;
    return 0;
}

size_t counter_get(const struct counter *c, const char *word)
{
    size_t slot = hash_word(word) % c->nbuckets;
    for (const struct entry *e = c->buckets[slot]; e; e = e->next)
        if (strcmp(e->word, word) == 0)
            return e->count;
    return 0;
}

static int by_count_then_word(const void *a, const void *b)
{
    const struct entry *x = *(const struct entry *const *)a;
    const struct entry *y = *(const struct entry *const *)b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->word, y->word);
}

size_t counter_top(const struct counter *c, const struct entry **out, size_t n)
{
    const struct entry **all = malloc((c->nwords ? c->nwords : 1) * sizeof *all);
    if (!all)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < c->nbuckets; i++)
        for (const struct entry *e = c->buckets[i]; e; e = e->next)
            all[k++] = e;
    qsort(all, k, sizeof *all, by_count_then_word);
    size_t written = k < n ? k : n;
    memcpy(out, all, written * sizeof *out);
    free(all);
    return written;
}
