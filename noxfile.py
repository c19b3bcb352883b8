"""Developer sessions wrapping the README commands (scripts/ is the source of truth).

nox -s tests        # scripts/test.sh: C++ (plain + ASan/UBSan), lint, Python tests
nox -s quickstart   # scripts/quickstart.sh
nox -s lint         # scripts/lint.sh: ruff check, ruff format --check, mypy
nox -s bench        # benchmarks/core.py
nox -s bench_parallel  # benchmarks/parallel_download.py
nox -s docs         # scripts/docs.sh: the API reference (pdoc) into build/api
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "none"  # the scripts keep their own environment (.venv)
nox.options.sessions = ["lint", "tests"]


@nox.session
def tests(session: nox.Session) -> None:
    session.run("./scripts/test.sh", *session.posargs, external=True)


@nox.session
def quickstart(session: nox.Session) -> None:
    session.run("./scripts/quickstart.sh", *session.posargs, external=True)


@nox.session
def lint(session: nox.Session) -> None:
    session.run("./scripts/lint.sh", external=True)


@nox.session
def docs(session: nox.Session) -> None:
    session.run("./scripts/docs.sh", *session.posargs, external=True)


@nox.session
def bench(session: nox.Session) -> None:
    session.run(".venv/bin/python", "benchmarks/core.py", *session.posargs, external=True)


@nox.session
def bench_parallel(session: nox.Session) -> None:
    session.run(
        ".venv/bin/python", "benchmarks/parallel_download.py", *session.posargs, external=True
    )
