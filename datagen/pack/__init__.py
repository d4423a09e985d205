"""Repo-level ordering (tree-sitter import graph), tokenization and sequence packing.

Floors, bottom up:

- ``extract`` / ``resolve`` / ``imports``: import specifiers per file (tree-sitter queries
  in ``queries/*.scm``), resolved to files of the same repo; ``order_repo(files)`` puts each
  file after what it imports (cycles broken deterministically and recorded).
- ``ordering``: what the text writer calls: ``RepoOrderer`` (per repo, or a stream of repos
  in parallel) and ``split_of`` (held-out repos -> ``validation``).
- ``docs``: a repo's ordered files -> documents (``doc_header``, ``file_header`` + text per
  file, EOS), cut between files at ``doc_max_tokens``.
- ``tokenize``: a local Hugging Face tokenizer; ``encode_batch`` into numpy.
- ``fim``: fill-in-the-middle (``pack.fim``): which files or documents, the cuts, PSM / SPM.
- ``long``: long-context buckets of repo documents and the longest output's long share
  (``pack.long``).
- ``packer``: concatenate-and-split into exactly ``seq_len`` tokens, with ``cu_seqlens``,
  per-segment document ids, position ids restarting per document, loss mask (0 on padding).
- ``writers`` / ``corpus``: ``OUT/tokens/<seq_len>/<split>-NNNNN-of-NNNNN.parquet``,
  ``OUT/tokens/<seq_len>/<split>_00000_unshuffled.ds`` (+ ``.index``, ``.loss``,
  ``.metadata``; datatrove) and ``OUT/tokens/<split>_text_document.bin/.idx`` (Megatron).
"""
