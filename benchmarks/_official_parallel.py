"""The official SDK's side of benchmarks/parallel_download.py; runs in its venv
(tests/compat/official_sdk.py).

argv: endpoint, bucket, object, mode, workers, reps
    mode: single (get_reader().read_all()), stream (iterate the parallel reader) or read_all
    (parallel read_all into a ParallelBuffer, closed after timing). workers=1 builds the
    official ParallelContentIterProvider directly (get_reader refuses fewer than 2).
Prints {"seconds": [...], "cpu": [...], "size": bytes, "shm_left": [...]} as JSON on its last
stdout line; times exclude interpreter start and imports; `cpu` counts this process and its
worker processes. `shm_left` lists the SDK's segments (psm_*) that appeared in /dev/shm.
"""

import json
import os
import resource
import sys
import time

from aistore import Client
from aistore.sdk.obj.content_iterator import ParallelContentIterProvider

endpoint, bucket, name, mode, workers, reps = sys.argv[1:7]
workers_n, reps_n = int(workers), int(reps)
obj = Client(endpoint).bucket(bucket).object(name)
before = set(os.listdir("/dev/shm"))


def provider():
    if workers_n >= 2:
        return obj.get_reader(num_workers=workers_n)._content_provider
    return ParallelContentIterProvider(obj.get_reader()._object_client, None, 1)


def cpu():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


seconds, cpus, size = [], [], 0
for _ in range(reps_n):
    c0, t0 = cpu(), time.perf_counter()
    if mode == "single":
        size = len(obj.get_reader().read_all())
    elif mode == "stream":
        size = sum(len(chunk) for chunk in provider().create_iter())
    else:
        buf = provider().read_all()
        size = len(buf)
    seconds.append(time.perf_counter() - t0)
    cpus.append(cpu() - c0)
    if mode == "read_all":
        buf.close()
left = sorted(n for n in set(os.listdir("/dev/shm")) - before if n.startswith("psm_"))
print(json.dumps({"seconds": seconds, "cpu": cpus, "size": size, "shm_left": left}))
