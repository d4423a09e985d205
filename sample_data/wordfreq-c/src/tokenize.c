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

#include "tokenize.h"

#include <ctype.h>

static int is_word_char(int ch)
{
    return isalnum(ch) || ch == '\'';
}

size_t next_word(FILE *in, char buf[MAX_WORD])
{
    int ch;
    size_t len = 0;

    while ((ch = fgetc(in)) != EOF && !isalnum(ch))
        ; /* skip separators; a word never starts with an apostrophe */
    while (ch != EOF && is_word_char(ch)) {
        if (len < MAX_WORD - 1)
            buf[len++] = (char)tolower(ch);
        ch = fgetc(in);
    }
    while (len > 0 && buf[len - 1] == '\'')
        len--; /* "dogs'" counts as "dogs" */
    buf[len] = '\0';
    return len;
}
