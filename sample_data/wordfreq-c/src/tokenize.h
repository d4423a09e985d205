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

#ifndef WORDFREQ_TOKENIZE_H
#define WORDFREQ_TOKENIZE_H

#include <stdio.h>

#define MAX_WORD 64

/* Reads the next word from in into buf (lower-cased, letters, digits and
 * inner apostrophes only, truncated to MAX_WORD - 1 bytes).
 * Returns the word length, or 0 at end of input. */
size_t next_word(FILE *in, char buf[MAX_WORD]);

#endif
