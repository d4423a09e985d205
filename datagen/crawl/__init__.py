"""Sources: list repositories (directories, git working trees, bare repos) and read files."""
