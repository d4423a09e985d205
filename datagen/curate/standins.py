"""Same-kind stand-ins for redacted values, so a redacted file still parses and builds.

The CPT corpus replaces a secret by a typed placeholder (``<EMAIL>``); a task's snapshot
cannot: build backends validate ``project.authors[].email`` and a ``setup.cfg`` header, and
tests may parse an address. Here each value becomes one of its own kind:

- e-mail: ``<word>-<hash>@example.com`` (a reserved domain, RFC 2606);
- IPv4: an address in a documentation range (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
  RFC 5737); IPv6: one in 2001:db8::/32 (RFC 3849);
- tokens, keys, passwords: the same length and shape, every letter and digit swapped for
  another of its class (the well-known prefix kept: ``ghp_``, ``AKIA``, ``sk-``, ``eyJ``),
  so a format check on the value (length, alphabet, prefix) still passes.

Each stand-in is a pure function of the original value (a SHA-256 of it), so one address
maps to the same stand-in in every file and every build.
"""

from __future__ import annotations

import hashlib
import re

_DOC_V4 = ("192.0.2", "198.51.100", "203.0.113")
# Prefixes that say what a token is; kept so format checks still recognise it.
_PREFIX = re.compile(r"^(?:gh[pousr]_|github_pat_|gl(?:pat|dt|ptt|rt)-|xox[abposr]-|(?:sk|rk|pk)_(?:live|test)_|"
                     r"sk-(?:proj-|svcacct-|admin-|ant-(?:api\d\d-)?)?|AKIA|ASIA|ABIA|ACCA|eyJ|https://hooks\.slack\.com/)")
_PEM = re.compile(r"^(-----BEGIN [A-Z ]+-----)([\s\S]*?)(-----END [A-Z ]+-----)$")
_LOWER, _UPPER, _DIGIT = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"


def _digest(kind: str, value: str) -> bytes:
    return hashlib.sha256(f"{kind}\0{value}".encode()).digest()


def _stream(kind: str, value: str):
    """Endless deterministic bytes derived from the value."""
    block, n = _digest(kind, value), 0
    while True:
        yield from block
        n += 1
        block = hashlib.sha256(block + n.to_bytes(4, "big")).digest()


def email_standin(value: str) -> str:
    """``jane.doe@corp.io`` -> ``jane-1a2b3c4d@example.com`` (the local part's first word kept)."""
    local = value.rpartition("@")[0]
    word = re.sub(r"[^a-z0-9]", "", re.split(r"[._+\-]", local.lower())[0])[:12] or "user"
    return f"{word}-{_digest('email', value.lower()).hex()[:8]}@example.com"


def ip_standin(value: str) -> str:
    """An IPv4 address in a documentation range, or IPv6 in 2001:db8::/32."""
    h = _digest("ip", value.lower())
    if ":" in value:
        groups = [f"{int.from_bytes(h[i:i + 2], 'big'):x}" for i in range(0, 8, 2)]
        return "2001:db8::" + ":".join(groups)
    return f"{_DOC_V4[h[0] % 3]}.{1 + h[1] % 254}"


def shaped_standin(kind: str, value: str) -> str:
    """The same length and character classes, a known prefix and PEM armour kept."""
    pem = _PEM.match(value)
    if pem:
        return pem.group(1) + shaped_standin(kind, pem.group(2)) + pem.group(3)
    prefix = _PREFIX.match(value)
    head = prefix.group(0) if prefix else ""
    rand = _stream(kind, value)
    out = []
    for ch in value[len(head):]:
        for alphabet in (_LOWER, _UPPER, _DIGIT):
            if ch in alphabet:
                out.append(alphabet[next(rand) % len(alphabet)])
                break
        else:
            out.append(ch)  # separators, '=', '/', '+', whitespace: the shape stays
    return head + "".join(out)


def standin(kind: str, value: str) -> str:
    """The stand-in of a value of rule kind ``kind`` (``filters/secrets.yaml``)."""
    if kind == "email":
        return email_standin(value)
    if kind == "ip_address":
        return ip_standin(value)
    return shaped_standin(kind, value)
