"""Small helpers shared by the tinyhttp modules."""

from tinyhttp.utils.strings import slugify, split_csv, squash_spaces, truncate

__all__ = ["slugify", "split_csv", "squash_spaces", "truncate"]
