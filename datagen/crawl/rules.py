"""The crawl rule pack (``filters/crawl.yaml``) and license allow-list, loaded once."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from datagen.config.base import load_yaml_pack
from datagen.config.cpt import CrawlConfig
from datagen.errors import UserError
from datagen.records import DropReason


@dataclass(frozen=True)
class CrawlRules:
    vendored_dirs: frozenset[str]
    vcs_dirs: frozenset[str]
    skip_dirs: frozenset[str]
    generated_names: tuple[str, ...]
    minified_names: tuple[str, ...]
    generated_markers: tuple[bytes, ...]
    marker_window: int
    minified_avg_line_length: float
    binary_extensions: frozenset[str]
    allowed_licenses: frozenset[str] | None  # None: any license
    allow_unknown_license: bool
    max_file_bytes: int
    respect_gitignore: bool

    @classmethod
    def from_config(cls, cfg: CrawlConfig) -> CrawlRules:
        pack = load_yaml_pack(cfg.rules)
        lic_pack = load_yaml_pack("licenses.yaml")
        if cfg.licenses == "any":
            allowed = None
        elif isinstance(cfg.licenses, str):
            if cfg.licenses not in lic_pack:
                raise UserError(f"crawl.licenses: no list {cfg.licenses!r} in filters/licenses.yaml")
            allowed = frozenset(lic_pack[cfg.licenses])
        else:
            allowed = frozenset(cfg.licenses)
        allow_unknown = (
            cfg.allow_unknown_license
            if cfg.allow_unknown_license is not None
            else bool(lic_pack.get("allow_unknown", False))
        )
        try:
            return cls(
                vendored_dirs=frozenset(pack["vendored_dirs"]),
                vcs_dirs=frozenset(pack["vcs_dirs"]),
                skip_dirs=frozenset(pack["skip_dirs"]),
                generated_names=tuple(pack["generated_names"]),
                minified_names=tuple(pack["minified_names"]),
                generated_markers=tuple(m.encode() for m in pack["generated_markers"]),
                marker_window=int(pack["marker_window"]),
                minified_avg_line_length=float(pack["minified_avg_line_length"]),
                binary_extensions=frozenset(e.lower() for e in pack["binary_extensions"]),
                allowed_licenses=allowed,
                allow_unknown_license=allow_unknown,
                max_file_bytes=cfg.max_file_bytes,
                respect_gitignore=cfg.respect_gitignore,
            )
        except KeyError as exc:
            raise UserError(f"rule pack {cfg.rules} lacks key {exc.args[0]!r}") from None

    def license_allowed(self, spdx: str | None) -> bool:
        if self.allowed_licenses is None:
            return True
        if spdx is None:
            return self.allow_unknown_license
        return spdx in self.allowed_licenses

    def name_skip(self, path: str) -> DropReason | None:
        """Reason to skip a file from its path alone, or None."""
        parts = path.split("/")
        if any(p in self.skip_dirs for p in parts[:-1]):
            return "skipped_dir"
        if any(p in self.vendored_dirs for p in parts[:-1]):
            return "vendored"
        name = parts[-1]
        dot = name.rfind(".")
        if dot > 0 and name[dot:].lower() in self.binary_extensions:
            return "binary"
        if any(fnmatch.fnmatchcase(name, pat) for pat in self.generated_names):
            return "generated"
        if any(fnmatch.fnmatchcase(name, pat) for pat in self.minified_names):
            return "minified"
        return None

    def has_generated_marker(self, data: bytes) -> bool:
        head = data[: self.marker_window]
        return any(m in head for m in self.generated_markers)
