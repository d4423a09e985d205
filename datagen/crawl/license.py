"""Detect a repository's license (SPDX id) from its LICENSE / COPYING file.

A keyword matcher over the standard license texts: enough for the common licenses,
``None`` when nothing matches. (A full matcher such as ScanCode is far heavier than
this step needs; see the README's note.)
"""

from __future__ import annotations

import re

LICENSE_FILE = re.compile(r"^(licen[sc]e|copying|unlicense)([.-].*)?$", re.IGNORECASE)

# Ordered: the first rule whose phrases all occur (case-insensitive, whitespace-collapsed) wins.
_RULES: list[tuple[str, tuple[str, ...]]] = [
    ("AGPL-3.0", ("gnu affero general public license", "version 3")),
    ("LGPL-3.0", ("gnu lesser general public license", "version 3")),
    ("LGPL-2.1", ("gnu lesser general public license", "version 2.1")),
    ("GPL-3.0", ("gnu general public license", "version 3")),
    ("GPL-2.0", ("gnu general public license", "version 2")),
    ("MPL-2.0", ("mozilla public license", "2.0")),
    ("Apache-2.0", ("apache license", "version 2.0")),
    ("BSD-3-Clause", ("redistribution and use in source and binary forms",
                      "neither the name of")),
    ("BSD-2-Clause", ("redistribution and use in source and binary forms",
                      "this list of conditions and the following disclaimer")),
    ("MIT", ("permission is hereby granted, free of charge", "the above copyright notice")),
    ("ISC", ("permission to use, copy, modify, and/or distribute this software",
             "provided that the above copyright notice")),
    ("Unlicense", ("this is free and unencumbered software released into the public domain",)),
    ("CC0-1.0", ("cc0 1.0 universal",)),
    ("0BSD", ("permission to use, copy, modify, and/or distribute this software for any purpose with or without fee",)),
]


def is_license_file(name: str) -> bool:
    return bool(LICENSE_FILE.match(name))


def detect_license(text: str) -> str | None:
    """SPDX id of a license text, or None."""
    spdx = re.search(r"SPDX-License-Identifier:\s*([A-Za-z0-9.+-]+)", text, re.IGNORECASE)
    if spdx:
        return spdx.group(1)
    flat = " ".join(text.lower().split())
    for spdx_id, phrases in _RULES:
        if all(p in flat for p in phrases):
            return spdx_id
    return None
