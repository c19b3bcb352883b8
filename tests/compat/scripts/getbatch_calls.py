"""GetBatch through whichever `aistore` package runs this script (the official SDK in its venv,
or ours): the same batches, reported item by item so that the two can be compared.

argv: endpoint, JSON plan. The plan is a list of batches:
    {"name", "ctor": {bucket, output_format, cont_on_err, only_obj_name, streaming_get},
     "objects": [names] | null, "as_objects": bool, "adds": [{obj, bucket?, archpath?, start?,
     length?, opaque_hex?, bck?, provider?}], "decode_as_stream": bool}
The JSON printed last maps each batch name to {"items": [...]} or {"error": "<class>: <text>"}.
"""

import hashlib
import json
import sys

import aistore
from aistore import Client

ENDPOINT, PLAN = sys.argv[1], json.loads(sys.argv[2])
client = Client(ENDPOINT)


def run(spec):
    ctor = dict(spec["ctor"])
    bucket = client.bucket(ctor.pop("bucket")) if ctor.get("bucket") else None
    ctor.pop("bucket", None)
    objects = spec.get("objects")
    if objects is not None and spec.get("as_objects"):
        objects = [client.bucket(b).object(o) for b, o in objects]
    batch = client.batch(objects, bucket=bucket, **ctor)
    for add in spec.get("adds", []):
        obj = add["obj"]
        if add.get("bucket"):
            obj = client.bucket(add["bucket"]).object(obj)
        kwargs = {k: add[k] for k in ("archpath", "start", "length", "bck", "provider") if k in add}
        if "opaque_hex" in add:
            kwargs["opaque"] = bytes.fromhex(add["opaque_hex"])
        batch.add(obj, **kwargs)
    items = []
    for out, data in batch.get(decode_as_stream=spec.get("decode_as_stream", False)):
        items.append(
            {
                "obj_name": out.obj_name,
                "archpath": out.archpath or "",
                "bucket": out.bucket,
                "provider": out.provider,
                "size": out.size,
                "err_msg": bool(out.err_msg),
                "opaque": out.opaque.hex() if out.opaque else "",
                "len": len(data),
                "sha": hashlib.sha256(data).hexdigest(),
            }
        )
    return {"items": items}


results = {"version": aistore.__version__}
for spec in PLAN:
    try:
        results[spec["name"]] = run(spec)
    except Exception as e:  # noqa: BLE001 - reported to the test
        results[spec["name"]] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
print(json.dumps(results))
