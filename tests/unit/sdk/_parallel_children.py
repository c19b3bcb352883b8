"""Bodies of child processes for the ParallelBuffer tests (importable by spawned children)."""

from __future__ import annotations

import os
from multiprocessing.connection import Connection

from aistore._internal import parallel, shm


def memfd_fds(pid: int | str = "self") -> list[str]:
    """Descriptors of `pid` that refer to our shared memory."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if "memfd:aistore" in target:
            out.append(target)
    return out


def report(conn: Connection) -> None:
    """Send this process's idle pool bytes and shared-memory descriptors."""
    conn.send((shm.pool().idle_bytes, len(memfd_fds())))


def report_pieces(conn: Connection) -> None:
    """Send how many stream pieces this process's pool keeps."""
    conn.send(parallel.piece_pool().kept)


def edit(conn: Connection) -> None:
    """Receive a buffer, describe it, write into it, send it back, wait, exit."""
    buf = conn.recv()
    conn.send((buf.tobytes()[:5], len(buf), buf.name))
    buf.buf[0:4] = b"EDIT"
    conn.send(buf)
    buf.close()
    conn.recv()


def hold(conn: Connection) -> None:
    """Receive a buffer, say so, and keep it mapped until killed."""
    buf = conn.recv()
    conn.send(buf.name)
    conn.recv()
