"""Redact credentials and PII with typed placeholders (``<AWS_ACCESS_KEY_ID>``,
``<EMAIL>``...). Patterns and allow-lists live in the ``filters/secrets.yaml`` rule pack.

Only the secret itself is replaced (the rule's ``secret`` group), so the quotes, keys and
comment markers around it stay and the file still parses. Counts per kind go to
``files.secrets_redacted`` and ``files.secret_kinds`` (a JSON map).
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from datatrove.data import Document

from datagen.config import load_yaml_pack
from datagen.config.curate import SecretsConfig
from datagen.curate.base import FileStep
from datagen.curate.standins import standin
from datagen.errors import UserError

_RULE_KEYS = {
    "kind",
    "placeholder",
    "pattern",
    "keywords",
    "prefilter",
    "min_entropy",
    "min_classes",
    "value_deny",
    "key_deny",
    "key_require",
    "context_deny",
    "check",
}
# The key of an assignment: the identifier (or quoted key) just before the operator, or
# before a Python annotation (``client_secret: str = ...``, ``key: Optional[str] = ...``).
_KEY_BEFORE = re.compile(r"([\w.\-]+)[\"']?\s*(?::\s*[\w.]+(?:\[[\w.\[\], |]*\])?(?:\s*\|\s*[\w.]+)*\s*)?$")
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")


def _prefilter(raw: dict, where: str) -> tuple[str, ...]:
    """The rule's ``prefilter`` (one Rust regex, or a list whose every regex must match),
    else its pattern when polars' Rust regex accepts it (no look-around or
    back-references), else () (the rule always runs)."""
    given = raw.get("prefilter")
    stages = tuple(given) if isinstance(given, list) else (given or raw["pattern"],)
    for regex in stages:
        try:
            pl.Series([""]).str.contains(regex)
        except pl.exceptions.PolarsError:
            if given:
                raise UserError(f"{where}: prefilter is not a valid Rust regex: {regex}") from None
            return ()
    return stages


def _normal_ip(value: str) -> str:
    """IPv6 in compressed lower-case form (as ``str(ip_address)`` writes it); else as is."""
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return value


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def char_classes(s: str) -> int:
    return (
        any(c.islower() for c in s)
        + any(c.isupper() for c in s)
        + any(c.isdigit() for c in s)
        + any(not c.isalnum() for c in s)
    )


@dataclass(frozen=True)
class Rule:
    kind: str
    placeholder: str
    pattern: re.Pattern
    keywords: tuple[str, ...] = ()
    # Rust regexes that all match wherever ``pattern`` finds a secret (batch prefilter)
    prefilter: tuple[str, ...] = ()
    min_entropy: float = 0.0
    min_classes: int = 0
    value_deny: re.Pattern | None = None
    key_deny: re.Pattern | None = None
    key_require: re.Pattern | None = None
    context_deny: re.Pattern | None = None
    check: str | None = None


@dataclass(frozen=True)
class SecretPack:
    rules: tuple[Rule, ...]
    email_domains: frozenset[str]
    email_locals: frozenset[str]
    ips: frozenset[str]

    @classmethod
    def load(cls, name: str = "secrets.yaml") -> SecretPack:
        """Read and compile a rule pack; a bad rule is a UserError naming it."""
        data: dict[str, Any] = load_yaml_pack(name) or {}
        rules = []
        for i, raw in enumerate(data.get("rules") or []):
            where = f"rule pack {name}, rule {i + 1} ({raw.get('kind', '?')})"
            unknown = set(raw) - _RULE_KEYS
            if unknown or not {"kind", "placeholder", "pattern"} <= set(raw):
                raise UserError(f"{where}: needs kind, placeholder, pattern; unknown keys: {sorted(unknown)}")
            try:
                compiled = {
                    k: re.compile(raw[k])
                    for k in ("pattern", "value_deny", "key_deny", "key_require", "context_deny")
                    if raw.get(k)
                }
            except re.error as exc:
                raise UserError(f"{where}: bad regex: {exc}") from None
            rules.append(
                Rule(
                    kind=raw["kind"],
                    placeholder=raw["placeholder"],
                    keywords=tuple(k.lower() for k in raw.get("keywords") or ()),
                    prefilter=_prefilter(raw, where),
                    min_entropy=float(raw.get("min_entropy", 0)),
                    min_classes=int(raw.get("min_classes", 0)),
                    check=raw.get("check"),
                    **compiled,
                )
            )
        allow = data.get("allow") or {}
        return cls(
            tuple(rules),
            frozenset(d.lower() for d in allow.get("email_domains", [])),
            frozenset(x.lower() for x in allow.get("email_locals", [])),
            frozenset(_normal_ip(x) for x in allow.get("ips", [])),
        )

    def _allowed(self, rule: Rule, value: str) -> bool:
        if rule.check == "ip":
            try:
                ip = ipaddress.ip_address(value)
            except ValueError:  # an octet over 255, a bad IPv6 group: not an address
                return True
            if ip.version == 6:
                return str(ip) in self.ips or not ip.is_global or ip not in _GLOBAL_UNICAST
            version_like = all(int(o) < 32 for o in value.split("."))
            return value in self.ips or not ip.is_global or version_like
        if rule.check == "email":
            local, _, domain = value.lower().rpartition("@")
            return (
                local in self.email_locals
                or domain in self.email_domains
                or any(domain.endswith("." + d) for d in self.email_domains)
            )
        return False

    def candidates(self, texts: list[str]) -> np.ndarray:
        """(texts x rules) mask of the rules that may match each text: every rule's
        prefilter runs over the whole batch in polars' linear-time Rust regex engine, so the
        backtracking Python patterns only run where a match is possible. A staged prefilter
        runs each regex only on the texts its earlier ones let through, and a stage that
        rules share (the same regexes up to it) runs once per batch."""
        mask = np.ones((len(texts), len(self.rules)), bool)
        if not texts:
            return mask
        col = pl.Series("t", texts, dtype=pl.String)
        passed: dict[tuple[str, ...], np.ndarray] = {(): mask[:, 0].copy()}
        for j, rule in enumerate(self.rules):
            for k in range(1, len(rule.prefilter) + 1):
                if rule.prefilter[:k] not in passed:
                    before = passed[rule.prefilter[:k - 1]]
                    passed[rule.prefilter[:k]] = _contains(col, before, rule.prefilter[k - 1])
            mask[:, j] = passed[rule.prefilter]
        return mask

    def find(self, text: str, rules: np.ndarray | None = None) -> list[tuple[int, int, Rule]]:
        """Non-overlapping (start, end, rule) spans of secrets to replace, in order;
        ``rules`` (a row of ``candidates``) skips rules that cannot match."""
        spans = []
        lowered = None  # made when a rule first needs it: most files pass no rule
        for order, rule in enumerate(self.rules):
            if rules is not None and not rules[order]:
                continue
            if rule.keywords:
                lowered = text.lower() if lowered is None else lowered
                if not any(k in lowered for k in rule.keywords):
                    continue  # cheap prefilter: most files hold none of a rule's literals
            for m in rule.pattern.finditer(text):
                grp = "secret" if "secret" in rule.pattern.groupindex else 0
                value = m.group(grp)
                if not value or not self._keep(rule, m, value, text):
                    continue
                spans.append((m.start(grp), order, m.end(grp)))
        spans.sort()
        out, last_end = [], -1
        for start, order, end in spans:
            if start >= last_end:
                out.append((start, end, self.rules[order]))
                last_end = end
        return out

    def _keep(self, rule: Rule, m: re.Match, value: str, text: str) -> bool:
        """Whether a match is a secret (not a placeholder, template or allowed value)."""
        if rule.value_deny and rule.value_deny.search(value):
            return False
        if "op" in rule.pattern.groupindex and (rule.key_deny or rule.key_require):
            found = _KEY_BEFORE.search(text, max(0, m.start("op") - 80), m.start("op"))
            key = found.group(1) if found else ""
            if rule.key_require and not rule.key_require.search(key):
                return False
            if rule.key_deny and rule.key_deny.search(key):
                return False
        if rule.check == "ip" and m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "._"):
            return False  # part of a longer dotted number or a name
        before = text[max(0, m.start() - 24) : m.start()]
        if rule.context_deny and rule.context_deny.search(before):
            return False
        if rule.min_entropy and entropy(value) < rule.min_entropy:
            return False
        if rule.min_classes and char_classes(value) < rule.min_classes:
            return False
        return not self._allowed(rule, value)

    def redact(self, text: str, rules: np.ndarray | None = None, standins: bool = False,
               keep: frozenset[str] = frozenset()) -> tuple[str, Counter]:
        """``text`` with every secret replaced by its placeholder, and counts per kind.
        ``standins``: by a same-kind value instead (``curate/standins.py``), so the file
        still parses; kinds in ``keep`` are left as they are (and not counted)."""
        counts: Counter = Counter()
        parts, pos = [], 0
        for start, end, rule in self.find(text, rules):
            if rule.kind in keep:
                continue
            value = text[start:end]
            parts += [text[pos:start], standin(rule.kind, value) if standins else rule.placeholder]
            counts[rule.kind] += 1
            pos = end
        parts.append(text[pos:])
        return "".join(parts), counts


def _contains(col: pl.Series, rows: np.ndarray, regex: str) -> np.ndarray:
    """Which texts of ``col`` match ``regex``, searched only in ``rows`` (False elsewhere)."""
    if rows.all():
        return col.str.contains(regex).fill_null(False).to_numpy()
    found = np.zeros(len(col), bool)
    where = np.flatnonzero(rows)
    if where.size:
        found[where] = col.gather(where).str.contains(regex).fill_null(False).to_numpy()
    return found


class SecretsStep(FileStep):
    """Redact secrets and PII in kept files; records ``secrets_redacted`` (total) and
    ``secret_kinds`` (JSON counts per kind, null when nothing was found)."""

    name = "secrets and PII"
    section = "secrets"
    writes = ("secrets_redacted", "secret_kinds")
    batch_docs = 256  # the prefilter runs once per batch

    def __init__(self, cfg: SecretsConfig):
        super().__init__()
        self.cfg = cfg
        self.pack = SecretPack.load(cfg.pack)  # load now: a bad pack fails before the run

    def process_batch(self, docs: list[Document]) -> None:
        mask = self.pack.candidates([d.text for d in docs])
        for doc, rules in zip(docs, mask, strict=True):
            self._redact(doc, rules)

    def process(self, doc: Document) -> None:
        self._redact(doc, None)

    def _redact(self, doc: Document, rules: np.ndarray | None) -> None:
        text, counts = self.pack.redact(doc.text, rules)
        doc.metadata["secrets_redacted"] = sum(counts.values())
        doc.metadata["secret_kinds"] = json.dumps(dict(sorted(counts.items()))) if counts else None
        if counts:
            doc.text = text
            for kind, n in counts.items():
                self.stat_update(f"secret_{kind}", value=n)


# Files whose e-mails and IPs are public packaging or licensing facts (PyPI shows them),
# kept when ``snapshot.redact_pii`` is off.
METADATA_NAMES = frozenset({"pyproject.toml", "setup.cfg", "setup.py", "PKG-INFO", "METADATA", "package.json",
                            "Cargo.toml", "pom.xml", "composer.json", "CITATION.cff", "codemeta.json"})
LICENSE_STEMS = ("LICENSE", "LICENCE", "COPYING", "NOTICE", "AUTHORS", "CONTRIBUTORS", "MAINTAINERS")
PII_KINDS = frozenset({"email", "ip_address"})


def is_metadata_file(path: str) -> bool:
    """Packaging metadata or a license / authors file (by name, any folder)."""
    name = path.rsplit("/", 1)[-1]
    return name in METADATA_NAMES or name.upper().startswith(LICENSE_STEMS)


def redact_file_text(pack: SecretPack, path: str, text: str, redact_pii: bool) -> tuple[str, Counter]:
    """A snapshot file's text with stand-ins (still valid for its parser). Secrets always go;
    e-mails and IPs stay in metadata and license files unless ``redact_pii``."""
    keep = PII_KINDS if not redact_pii and is_metadata_file(path) else frozenset()
    return pack.redact(text, standins=True, keep=keep)
