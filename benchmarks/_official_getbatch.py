"""The official SDK's side of benchmarks/getbatch.py; runs in its venv
(tests/compat/official_sdk.py).

argv: endpoint, bucket, name prefix, distinct objects, batch size, items to fetch.
Fetches the items as consecutive batches of object names `<prefix><i % distinct:06d>` through
the official Batch API (streaming .tar, the defaults) and prints {"seconds", "bytes", "items"}
as JSON on its last stdout line, and the CPU seconds it used ("cpu_seconds"). Times exclude
interpreter start and imports.
"""

import json
import sys
import time

from aistore import Client

endpoint, bucket_name, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
distinct, batch_size, total = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])

client = Client(endpoint)
bucket = client.bucket(bucket_name)
names = [f"{prefix}{i % distinct:06d}" for i in range(total)]
got = size = 0
c0 = time.process_time()
t0 = time.perf_counter()
for start in range(0, total, batch_size):
    for _, data in client.batch(names[start : start + batch_size], bucket=bucket).get():
        got += 1
        size += len(data)
seconds = time.perf_counter() - t0
cpu_seconds = time.process_time() - c0
if got != total:
    raise SystemExit(f"official batch returned {got} of {total} items")
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu_seconds, "bytes": size, "items": got}))
