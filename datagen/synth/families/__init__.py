"""Task families: how each kind of task is proposed, grown and described.

One module per family; the registry (``registry``) says which families exist, the share
of a repo's candidate budget each takes, and the hooks the tasks build calls.
"""
