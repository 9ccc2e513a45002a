"""Share one big walk between this process and forked children.

The parent hands each child an interleaved share of the pending directories (they
inherit it with the fork: nothing is serialised on the way in). Each child walks its
share, publishes its running counts in shared memory for the progress bar, and sends
its totals back through a pipe (marshal). Hard links are merged by inode, so totals are
exact whatever the split. A child that fails has its share walked again here.
"""

from __future__ import annotations

import marshal
import mmap
import os
import struct

from labctl.disk.usage import Progress, Walk, scan

_COUNTERS = struct.Struct("=qq")


def _child(w: Walk, share: list[str], counters: memoryview, out: int) -> None:
    """In a forked child: walk `share`, publish progress, send the totals, exit."""
    code = 0
    try:

        def tick() -> None:
            counters[:16] = _COUNTERS.pack(w.files + w.dirs, w.blocks * 512)

        scan(w, share, 1 << 62, tick)
        data = marshal.dumps(w.as_tuple())  # type: ignore[arg-type]
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]
    except BaseException:
        code = 1
    os._exit(code)


def split(w: Walk, stack: list[str], workers: int, progress: Progress | None) -> None:
    """Share the pending directories with `workers - 1` forked children."""
    shares = [stack[i::workers] for i in range(workers)]
    counters = mmap.mmap(-1, 16 * workers)
    children: list[tuple[int, int, list[str]]] = []
    for i, share in enumerate(shares[1:], start=1):
        r, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            os.close(r)
            child = Walk(w.dev, w.uid)
            _child(child, share, memoryview(counters)[16 * i : 16 * i + 16], wfd)
        os.close(wfd)
        children.append((pid, r, share))

    def tick() -> None:
        if progress is not None:
            extra = [_COUNTERS.unpack_from(counters, 16 * i) for i in range(1, workers)]
            progress(
                w.files + w.dirs + sum(e for e, _ in extra),
                w.blocks * 512 + sum(b for _, b in extra),
            )

    try:
        scan(w, shares[0], 1 << 62, tick)
        for pid, r, share in children:
            with os.fdopen(r, "rb") as fh:
                data = fh.read()
            _, status = os.waitpid(pid, 0)
            if status == 0 and data:
                w.merge(marshal.loads(data))
            else:  # the child failed: walk its share here
                scan(w, share, 1 << 62, tick)
    finally:
        for pid, _, _ in children:  # never leave a zombie, whatever happened above
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        counters.close()
