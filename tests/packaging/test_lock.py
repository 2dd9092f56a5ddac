"""The dependency lock: what the README's two commands install, and how it meets the ranges.

scripts/run.sh and scripts/test.sh install (through scripts/_env.sh) from
requirements/run.txt and requirements/test.txt, so a fresh machine gets the numpy, scipy,
polars and pyarrow that wrote the committed dvc.lock instead of whatever is newest. The
package itself keeps ranges for library users (tests/packaging/test_wheel.py checks the
wheel's own requirements against this lock).
"""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
LOCKS = REPO / "requirements"
# The extras scripts/test.sh installs (and so requirements/test.txt is compiled for).
TEST_EXTRAS = ("dev", "bayes", "inspect")


def read_lock(path: Path) -> list[Requirement]:
    """The pinned requirements of a ``uv pip compile --generate-hashes`` file.

    Continuation lines are joined and the ``--hash`` options and comments dropped, leaving
    ``name==version ; marker`` per package (a package may appear once per marker fork).
    """
    joined = path.read_text(encoding="utf-8").replace("\\\n", " ")
    pins = []
    for line in joined.splitlines():
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        spec = " ".join(part for part in text.split() if not part.startswith("--hash="))
        pins.append(Requirement(spec))
    return pins


def pinned_here(path: Path) -> dict[str, str]:
    """Package name -> locked version for this interpreter and platform (markers applied)."""
    out: dict[str, str] = {}
    for req in read_lock(path):
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        (spec,) = req.specifier
        assert spec.operator == "==", f"{path.name}: {req} is not a pin"
        out[canonicalize_name(req.name)] = spec.version
    return out


def _declared(extras: tuple[str, ...] = ()) -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(project["dependencies"])
    for extra in extras:
        specs += project["optional-dependencies"][extra]
    return [Requirement(s) for s in specs]


@pytest.mark.parametrize(
    ("lock", "extras"), [("run.txt", ()), ("test.txt", TEST_EXTRAS)], ids=["run", "test"]
)
def test_lock_pins_every_declared_dependency_within_its_range(
    lock: str, extras: tuple[str, ...]
) -> None:
    pins = pinned_here(LOCKS / lock)
    for req in _declared(extras):
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        assert name in pins, f"requirements/{lock} lacks {req.name}: run scripts/lock.sh"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"requirements/{lock} pins {name}=={pins[name]} outside pyproject's {req}: "
            "run scripts/lock.sh"
        )


def test_run_lock_is_the_test_lock_without_the_extras() -> None:
    """`run.sh` and `test.sh` must compute with the same versions, or a test passes on a
    numpy that the run does not use."""
    run = {(str(r.name), str(r.specifier), str(r.marker)) for r in read_lock(LOCKS / "run.txt")}
    test = {(str(r.name), str(r.specifier), str(r.marker)) for r in read_lock(LOCKS / "test.txt")}
    assert run <= test, sorted(run - test)
    assert all("--hash=sha256:" in (LOCKS / f).read_text() for f in ("run.txt", "test.txt"))


def test_this_environment_was_installed_from_the_lock() -> None:
    """The README's test command made this environment: every locked package at its pin."""
    wrong = {}
    for name, version in pinned_here(LOCKS / "test.txt").items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            installed = "missing"
        if installed != version:
            wrong[name] = f"{installed} (locked {version})"
    assert not wrong, f"not the locked versions (bash scripts/test.sh reinstalls): {wrong}"
