"""Detect a repository's license (SPDX id) from its LICENSE / COPYING file.

Two passes over the whitespace-collapsed, lowercased text:
1. titled licenses (GPL family, MPL, Apache, BSL, ...) by their title near the start, so
   that one license text quoting another (GPL-3.0 names the AGPL in its section 13, MPL-2.0
   names the GPL family) is not mistaken for it;
2. untitled permissive licenses (MIT, BSD, ISC, Zlib, ...) by their characteristic clauses.

A keyword matcher is enough for the common licenses and returns ``None`` otherwise. (A
full matcher such as ScanCode is far heavier than this step needs; see the README.)
"""

from __future__ import annotations

import re

# ``MIT-LICENSE``: the Rails / RubyGems convention (e.g. jeremyevans/ruby-cicphash)
LICENSE_FILE = re.compile(r"^(mit-)?(licen[sc]e|copying|unlicense)([.-].*)?$", re.IGNORECASE)
_HEAD = 400  # characters of the collapsed text in which a license's title must appear

# (SPDX id, title phrase, version phrase or None), first match wins.
_TITLED: list[tuple[str, str, str | None]] = [
    ("AGPL-3.0", "gnu affero general public license", "version 3"),
    ("LGPL-3.0", "gnu lesser general public license", "version 3"),
    ("LGPL-2.1", "gnu lesser general public license", "version 2.1"),
    ("LGPL-2.0", "gnu library general public license", "version 2"),
    ("GPL-3.0", "gnu general public license", "version 3"),
    ("GPL-2.0", "gnu general public license", "version 2"),
    ("GPL-1.0", "gnu general public license", "version 1"),
    ("MPL-2.0", "mozilla public license", "version 2.0"),
    ("MPL-1.1", "mozilla public license", "version 1.1"),
    ("Apache-2.0", "apache license", "version 2.0"),
    ("BSL-1.0", "boost software license", "version 1.0"),
    ("EPL-2.0", "eclipse public license", "v 2.0"),
    ("PSF-2.0", "python software foundation license version 2", None),
    ("CC0-1.0", "cc0 1.0 universal", None),
    ("Artistic-2.0", "the artistic license 2.0", None),
]

# (SPDX id, phrases that must all occur anywhere), first match wins.
_CLAUSES: list[tuple[str, tuple[str, ...]]] = [
    ("BSD-3-Clause", ("redistribution and use in source and binary forms", "neither the name of")),
    ("BSD-2-Clause", ("redistribution and use in source and binary forms",
                      "this list of conditions and the following disclaimer")),
    ("MIT", ("permission is hereby granted, free of charge", "the above copyright notice")),
    ("ISC", ("permission to use, copy, modify, and/or distribute this software",
             "provided that the above copyright notice")),
    ("0BSD", ("permission to use, copy, modify, and/or distribute this software for any purpose "
              "with or without fee is hereby granted",)),
    ("Zlib", ("altered source versions must be plainly marked as such",
              "this notice may not be removed or altered from any source distribution")),
    ("Unlicense", ("this is free and unencumbered software released into the public domain",)),
]


def is_license_file(name: str) -> bool:
    return bool(LICENSE_FILE.match(name))


def detect_license(text: str) -> str | None:
    """SPDX id of a license text, or None."""
    spdx = re.search(r"SPDX-License-Identifier:\s*([A-Za-z0-9.+-]+)", text, re.IGNORECASE)
    if spdx:
        return spdx.group(1)
    flat = " ".join(text.lower().split())
    head = flat[:_HEAD]
    for spdx_id, title, version in _TITLED:
        pos = head.find(title)
        if pos >= 0 and (version is None or version in flat[pos : pos + len(title) + 120]):
            return spdx_id
    for spdx_id, phrases in _CLAUSES:
        if all(p in flat for p in phrases):
            return spdx_id
    return None
