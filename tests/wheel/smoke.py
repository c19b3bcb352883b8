"""A built wheel, installed into a new virtual environment, tried as a user would
(scripts/wheel-smoke.sh runs this with that environment's python, from /).

Checks: the package, the server binary and the extension are the wheel's; every shared library
they load resolves, and the ones outside the manylinux baseline come from the wheel's own
library directory (so no -dev package of this machine is what makes it work); then the
`aistore-server` console script, `LocalServer`, object I/O through the native client, GetBatch
and (where torch is importable) the datasets. Exits non-zero, saying what failed, on the first
failure.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

# What manylinux lets a wheel take from the system (PEP 600's baseline libraries).
BASELINE = {
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "librt.so.1",
    "libpthread.so.0",
    "libgcc_s.so.1",
    "libstdc++.so.6",
    "ld-linux-x86-64.so.2",
    "linux-vdso.so.1",
    "libutil.so.1",
    "libnsl.so.1",
    "libcrypt.so.1",
    "libz.so.1",
    "libresolv.so.2",  # glibc's
}


def fail(msg: str) -> None:
    sys.exit(f"wheel smoke: FAILED: {msg}")


def check_libraries(binary: Path, libs_dir: Path) -> int:
    """Every library `binary` loads resolves; the non-baseline ones inside `libs_dir`. Returns
    how many came from the wheel."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    vendored = 0
    for line in out.splitlines():
        parts = line.split()
        if not parts:
            continue
        name = parts[0]
        if "not found" in line:
            fail(f"{binary.name} needs {name}, which is not found")
        base = Path(name).name
        if base in BASELINE or "=>" not in line:
            continue
        path = Path(parts[2]).resolve()
        if libs_dir not in path.parents:
            fail(f"{binary.name} loads {name} from {path}, outside the wheel ({libs_dir})")
        vendored += 1
    return vendored


def main() -> None:
    import aistore
    from aistore.server import LocalServer, find_server_binary

    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    pkg = Path(aistore.__file__).resolve().parent
    if pkg.parent != site:
        fail(f"aistore imported from {pkg}, not from the new environment ({site})")
    binary = find_server_binary().resolve()
    native = next(pkg.glob("_native*.so"))
    libs_dir = site / "aistore_embedded.libs"
    if not libs_dir.is_dir():
        fail(f"no vendored libraries at {libs_dir}")
    counts = {b.name: check_libraries(b, libs_dir) for b in (binary, native)}
    print(f"wheel smoke: aistore {aistore.__version__} from {pkg}; vendored libraries: {counts}")

    script = Path(sys.executable).parent / "aistore-server"
    helped = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=30)
    if helped.returncode != 0 or "--port" not in helped.stdout + helped.stderr:
        fail(f"aistore-server --help: exit {helped.returncode}: {helped.stderr[-500:]}")

    with LocalServer(num_mountpaths=2) as srv:
        client = srv.client()
        bucket = client.bucket("smoke").create()
        data = {f"obj-{i:03}": bytes([i]) * (1000 + 37 * i) for i in range(50)}
        for name, body in data.items():
            bucket.object(name).get_writer().put_content(body)
        for name, body in data.items():
            if bucket.object(name).get_reader().read_all() != body:
                fail(f"GET {name}: wrong bytes")
        import aistore._native  # noqa: F401 (the extension loads)

        batch = client.batch(bucket=bucket)
        for name in data:
            batch.add(name)
        got = {info.obj_name: content for info, content in batch.get()}
        if got != data:
            fail("GetBatch: wrong objects or bytes")
        print(f"wheel smoke: server {srv.endpoint}: PUT/GET and GetBatch of {len(data)} objects")
        try:
            import torch  # noqa: F401
        except ImportError:
            print("wheel smoke: torch not importable: datasets not tried")
        else:
            from torch.utils.data import DataLoader

            from aistore.pytorch import AISMapDataset

            ds = AISMapDataset(ais_source_list=[bucket])
            seen = {name: body for name, body in DataLoader(ds, batch_size=None, num_workers=0)}
            if {k.split("/")[-1]: bytes(v) for k, v in seen.items()} != data:
                fail("AISMapDataset: wrong samples")
            print(f"wheel smoke: AISMapDataset read {len(seen)} samples")
    print("wheel smoke: OK")


if __name__ == "__main__":
    main()
