"""Every notebook and script in examples/ runs end to end on the embedded server.

Notebooks run in a fresh ipykernel started with this interpreter (`sys.executable`) from a
kernelspec written for the test, with the Jupyter and IPython directories in a temporary
folder: no Jupyter configuration of the machine is used or needed. Kernels and scripts import the
same `aistore` as this test process.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import aistore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))
SCRIPTS = sorted(EXAMPLES.glob("*.py"))

# Arguments that keep a script within seconds on a 2-core machine.
SCRIPT_ARGS: dict[str, list[str]] = {
    "quickstart.py": ["--small-objects", "300", "--large-objects", "1", "--large-mib", "16"],
}
CELL_TIMEOUT = 120  # seconds per notebook cell
SCRIPT_TIMEOUT = 240


def _code_of(path: Path) -> str:
    if path.suffix == ".py":
        return path.read_text()
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def _missing_import(path: Path) -> str | None:
    """The first import of the example that cannot be satisfied here, or None.

    Only optional dependencies (torch and the like) may be missing; a missing `aistore` module
    or name is a failure, not a skip.
    """
    for node in ast.walk(ast.parse(_code_of(path))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
        else:
            continue
        for module in modules:
            top = module.split(".")[0]
            if top != "aistore" and importlib.util.find_spec(top) is None:
                return f"{path.name} needs {top}, which is not installed"
    return None


def _env_for_children(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    package_root = str(Path(aistore.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "jupyter-runtime")
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "jupyter-config")
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "jupyter-data")
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    env["MPLBACKEND"] = "Agg"
    return env


def test_examples_exist() -> None:
    assert len(NOTEBOOKS) >= 4 and len(SCRIPTS) >= 2


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(notebook: Path) -> None:
    doc = json.loads(notebook.read_text())
    for i, cell in enumerate(doc["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"cell {i} has outputs"
            assert cell["execution_count"] is None, f"cell {i} has an execution count"
    assert doc["metadata"]["kernelspec"]["name"] == "python3"


def _execute(nb: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run `nb` in place (outputs land in its cells); raises on the first failing cell."""
    nbclient = pytest.importorskip("nbclient", reason="needs the dev extra (nbclient)")
    pytest.importorskip("ipykernel", reason="needs the dev extra (ipykernel)")
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    for key, value in _env_for_children(tmp_path).items():
        monkeypatch.setenv(key, value)
    # A kernelspec of our own, so the kernel is this interpreter whatever is installed where.
    spec_dir = tmp_path / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (examples test)",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    km = AsyncKernelManager(
        kernel_name="python3",
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")]),
        transport="ipc",
        ip=str(tmp_path / "kernel-ipc"),
    )
    work = tmp_path / "work"
    work.mkdir()
    client = nbclient.NotebookClient(
        nb, km=km, timeout=CELL_TIMEOUT, resources={"metadata": {"path": str(work)}}
    )
    client.execute()


def test_kernel_is_this_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat", reason="needs the dev extra (nbformat)")
    code = "import sys, aistore\nprint(sys.executable)\nprint(aistore.__file__)"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    _execute(nb, tmp_path, monkeypatch)
    printed = "".join(out.get("text", "") for out in nb.cells[0].outputs).split()
    assert printed == [sys.executable, aistore.__file__]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(notebook: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat", reason="needs the dev extra (nbformat)")
    if reason := _missing_import(notebook):
        pytest.skip(reason)
    _execute(nbformat.read(notebook, as_version=4), tmp_path, monkeypatch)


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_script_runs(script: Path, tmp_path: Path) -> None:
    if reason := _missing_import(script):
        pytest.skip(reason)
    proc = subprocess.run(
        [sys.executable, str(script), *SCRIPT_ARGS.get(script.name, [])],
        cwd=tmp_path,
        env=_env_for_children(tmp_path),
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
