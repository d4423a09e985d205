"""tinyhttp: a very small HTTP/1.1 toolkit for learning and for tests.

(Copied here by `python -m build`; this folder is build output and git-ignored.)
"""

__version__ = "0.2.9"
