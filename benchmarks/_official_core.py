"""The official SDK's side of benchmarks/core.py; runs in its venv (tests/compat/official_sdk.py).

argv: endpoint, case, then the case's arguments:
    get-small BUCKET NUM_OBJECTS CONCURRENCY SECONDS   -> {"rate": obj/s, "cpu_us": CPU per GET}
    get-big   BUCKET OBJECT REPS                       -> {"seconds": [...], "size": bytes}
    put-small BUCKET SIZE CONCURRENCY SECONDS          -> {"rate": objects/s}
    put-file  BUCKET OBJECT PATH REPS                  -> {"seconds": [...], "size": bytes}
    list      BUCKET REPS                              -> {"seconds": [...], "count": entries}
Prints the result as JSON on its last stdout line. Times exclude interpreter start and imports.
"""

import json
import os
import sys
import threading
import time

from aistore import Client

endpoint, case, rest = sys.argv[1], sys.argv[2], sys.argv[3:]


def get_small(bucket_name: str, num: str, conc: str, seconds: str) -> dict:
    n, c, duration = int(num), int(conc), float(seconds)
    bucket = Client(endpoint, max_pool_size=max(10, c)).bucket(bucket_name)
    counts = [0] * c
    start = threading.Barrier(c + 1)
    deadline = [0.0]

    def worker(t: int) -> None:
        start.wait()
        i, done = t, 0
        while time.perf_counter() < deadline[0]:
            bucket.object(f"obj-{i % n:06d}").get_reader().read_all()
            i, done = i + c, done + 1
        counts[t] = done

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(c)]
    for th in threads:
        th.start()
    cpu0, t0 = time.process_time(), time.perf_counter()
    deadline[0] = t0 + duration
    start.wait()
    for th in threads:
        th.join()
    done = sum(counts)
    return {
        "rate": done / (time.perf_counter() - t0),
        "cpu_us": (time.process_time() - cpu0) / done * 1e6,
    }


def get_big(bucket_name: str, obj_name: str, reps: str) -> dict:
    obj = Client(endpoint).bucket(bucket_name).object(obj_name)
    seconds, size = [], 0
    for _ in range(int(reps)):
        t0 = time.perf_counter()
        data = obj.get_reader().read_all()
        seconds.append(time.perf_counter() - t0)
        size = len(data)
        del data
    return {"seconds": seconds, "size": size}


def put_small(bucket_name: str, size: str, conc: str, seconds: str) -> dict:
    c = int(conc)
    bucket = Client(endpoint, max_pool_size=max(10, c)).bucket(bucket_name)
    data = os.urandom(int(size))
    counts = [0] * c
    start = threading.Barrier(c + 1)
    deadline = [0.0]

    def worker(t: int) -> None:
        start.wait()
        done = 0
        while time.perf_counter() < deadline[0]:
            bucket.object(f"put-official-{size}-{t}-{done:07d}").get_writer().put_content(data)
            done += 1
        counts[t] = done

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(c)]
    for th in threads:
        th.start()
    t0 = time.perf_counter()
    deadline[0] = t0 + float(seconds)
    start.wait()
    for th in threads:
        th.join()
    return {"rate": sum(counts) / (time.perf_counter() - t0)}


def put_file(bucket_name: str, obj_name: str, path: str, reps: str) -> dict:
    obj = Client(endpoint).bucket(bucket_name).object(obj_name)
    seconds = []
    for _ in range(int(reps)):
        t0 = time.perf_counter()
        obj.get_writer().put_file(path)
        seconds.append(time.perf_counter() - t0)
    return {"seconds": seconds, "size": os.path.getsize(path)}


def list_objects(bucket_name: str, reps: str) -> dict:
    bucket = Client(endpoint).bucket(bucket_name)
    seconds, count = [], 0
    for _ in range(int(reps)):
        t0 = time.perf_counter()
        count = sum(1 for _ in bucket.list_objects_iter())
        seconds.append(time.perf_counter() - t0)
    return {"seconds": seconds, "count": count}


CASES = {
    "get-small": get_small,
    "get-big": get_big,
    "put-small": put_small,
    "put-file": put_file,
    "list": list_objects,
}
print(json.dumps(CASES[case](*rest)))
