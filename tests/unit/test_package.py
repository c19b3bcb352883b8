"""The package as a newcomer meets it: a source checkout without the built extension."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import aistore


def test_source_checkout_without_extension_says_how_to_build(tmp_path: Path) -> None:
    # A checkout's aistore/: the package's Python files and no compiled extension.
    shutil.copytree(
        Path(aistore.__file__).parent,
        tmp_path / "aistore",
        ignore=shutil.ignore_patterns("*.so", "__pycache__"),
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYTHONPATH")}
    out = subprocess.run(
        [sys.executable, "-c", "import aistore"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: aistore's native extension is not built in ")
    assert "scripts/setup.sh" in last and "circular" not in out.stderr


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("aistore.authn_service.main", "jwt", "authn"),
        ("aistore._internal.tls_files", "cryptography", "tls"),
        ("aistore.pytorch", "numpy", "torch"),
    ],
)
def test_optional_part_names_its_extra(module: str, blocked: str, extra: str) -> None:
    code = (
        f"import sys; sys.modules[{blocked!r}] = None\n"
        "import aistore\n"
        "try:\n"
        f"    import {module}\n"
        "except ImportError as e:\n"
        "    print('ERR', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERR ") and blocked in out.stdout
    assert f'pip install "aistore-embedded[{extra}]"' in out.stdout


def test_import_aistore_loads_nothing_heavy() -> None:
    code = (
        "import sys, aistore, aistore.server\n"
        "from aistore.sdk import Client\n"
        "heavy = ('torch', 'numpy', 'jwt', 'cryptography', 'cheroot', 'boto3', 'fastapi')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


DEPENDENCIES_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "dependencies.py"


def _dependencies(extras: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(DEPENDENCIES_SCRIPT), extras],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_setup_installs_what_pip_would_for_the_extras() -> None:
    # setup.sh installs these beside the C++ build, then the package with --no-deps: the list
    # must hold the base requirements, the extra's, and those of extras an extra names.
    import tomllib

    project = tomllib.loads((DEPENDENCIES_SCRIPT.parents[1] / "pyproject.toml").read_text())[
        "project"
    ]
    optional = project["optional-dependencies"]
    torch = _dependencies("torch").stdout.splitlines()
    assert torch == project["dependencies"] + optional["torch"]
    dev = _dependencies("dev,torch").stdout.splitlines()
    for req in project["dependencies"] + optional["etl"] + optional["authn"] + optional["torch"]:
        assert req in dev
    assert not [r for r in dev if r.startswith(project["name"])]
    assert len(dev) == len(set(dev))


def test_setup_refuses_an_unknown_extra() -> None:
    out = _dependencies("torch,nosuch")
    assert out.returncode == 1 and "no extra 'nosuch'" in out.stderr
