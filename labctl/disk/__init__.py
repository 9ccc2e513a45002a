"""Disk space: measure trees the way `du -sx` does, find what may be pruned, delete it safely.

- `usage`: disk usage of a tree (allocated blocks, hard links once, one file system, no
  symlink followed), fast enough to stand beside `du`;
- `volume`: free space of the volume holding a path;
- `inuse`: which files and directories processes hold open (/proc);
- `remove`: deletion that never leaves its root, never follows a symlink, never crosses
  into another file system;
- `rules`, `candidates`, `hfcache`, `traces`, `plan`: the `prune-disk` core.
"""
