"""The loopback ceiling shared by the benchmarks: one TCP stream from a sender process's memory
into a small reused buffer here (what a single-stream download can reach on this machine).

Two receivers: one that sleeps in `recv` whenever the socket is empty (as iperf and most
clients do: the conventional figure, which the goals are judged against), and one that
retries a drained socket without sleeping (as our native client does for up to ~50 us
inside a reply). On a VM the second can reach about twice the first: every wake-up of a
sleeping receiver costs the sender an inter-processor interrupt."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

_SENDER = """
import socket, sys
port, total = int(sys.argv[1]), int(sys.argv[2])
buf = memoryview(bytearray(4 << 20))
with socket.create_connection(("127.0.0.1", port)) as s:
    sent = 0
    while sent < total:
        s.sendall(buf)
        sent += len(buf)
"""


def loopback_seconds(total: int, timeout: float = 120.0, spin: bool = False) -> float:
    """Seconds to receive `total` bytes over loopback TCP; with `spin`, by a receiver that
    never sleeps."""
    with socket.socket() as lsock:
        lsock.bind(("127.0.0.1", 0))
        lsock.listen(1)
        port = lsock.getsockname()[1]
        sender = subprocess.Popen([sys.executable, "-c", _SENDER, str(port), str(total)])
        try:
            conn, _ = lsock.accept()
            with conn:
                conn.setblocking(not spin)
                buf = memoryview(bytearray(4 << 20))
                got = 0
                t0 = time.perf_counter()
                while got < total:
                    try:
                        n = conn.recv_into(buf)
                    except BlockingIOError:
                        continue
                    if n == 0:
                        break
                    got += n
                elapsed = time.perf_counter() - t0
        finally:
            sender.wait(timeout=timeout)
    if got < total:
        raise RuntimeError(f"socket pump delivered {got} of {total} bytes")
    return elapsed
