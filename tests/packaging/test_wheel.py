"""The wheel is self-contained: installed away from the checkout, the package still validates.

The schemas live once, in the top-level ``schemas/``; the build maps them into the wheel as
``curation/_schemas/``. Nothing in the checkout can show that this works (there the loader
reads ``schemas/`` directly), so these tests build a real wheel from a copy of the source
tree, install it with ``--no-deps`` into a new virtual environment and import it from an
empty folder. They fail when package data goes missing from the build configuration.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.packaging.test_lock import pinned_here

pytestmark = pytest.mark.packaging

REPO = Path(__file__).resolve().parents[2]
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
# Never let the checkout, or a schema folder override, leak into the installed package's run.
LEAKY_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH", "BENCHCURATE_SCHEMAS")


def _run(cmd: list[str | Path], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; on failure, fail the test with its output (not just an exit code)."""
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kwargs
    )
    if proc.returncode != 0:
        pytest.fail(f"{cmd} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def source() -> list[str]:
    """The files a commit would hold (tracked plus untracked, not ignored), as POSIX paths.

    Both what the wheel is built from and what it must contain, so an ignored stray file in
    the work tree (an editor's swap file, a local output) changes neither.
    """
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: cannot tell source files from outputs")
    listing = _run(
        ["git", "-C", REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    ).stdout
    # A tracked file deleted in the work tree is not part of the source.
    return sorted(rel for rel in set(listing.split("\0")) if rel and (REPO / rel).is_file())


def _backend_installed() -> bool:
    """Whether this environment has every ``[build-system] requires`` of pyproject.toml.

    Then the build runs offline with ``--no-build-isolation`` (the dev extra installs the
    backend). Otherwise pip installs it into a throwaway build environment from the index.
    """
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    for spec in config["build-system"]["requires"]:
        req = Requirement(spec)
        try:
            version = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            return False
        if not req.specifier.contains(version, prereleases=True):
            return False
    return True


@pytest.fixture(scope="module")
def wheel(source: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the source files.

    Not built in place: that writes build/ and *.egg-info into the checkout, and setuptools
    never clears build/lib, so a file deleted from the checkout would still reach the wheel
    from an earlier build and the tests would pass for the wrong reason.
    """
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    for rel in source:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, src / rel)
    isolation = ["--no-build-isolation", "--no-index"] if _backend_installed() else []
    _run([*PIP, "wheel", "--no-deps", *isolation, "--wheel-dir", root / "dist", src])
    (built,) = (root / "dist").glob("benchcurate-*.whl")
    return built


def _under(files: list[str], folder: str) -> set[str]:
    """Paths in ``files`` below ``folder/``, relative to it."""
    return {f.removeprefix(folder) for f in files if f.startswith(folder)}


def _schema_files(source: list[str]) -> set[str]:
    return {f for f in _under(source, "schemas/") if f.endswith(".schema.json")}


def test_wheel_holds_every_schema_and_package_file(source: list[str], wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        files = zf.namelist()
    schemas = _schema_files(source)
    assert len(schemas) >= 20
    assert _under(files, "curation/_schemas/") == schemas
    # Every module and data file of the package (prompts, templates, static assets, the
    # KaTeX fonts, py.typed): a subpackage missing from `packages` or a file type missing
    # from package-data shows up here.
    package = _under(source, "curation/")
    assert "py.typed" in package
    assert any(f.startswith("review/static/katex/fonts/") for f in package)
    in_wheel = _under(files, "curation/") - {f"_schemas/{s}" for s in schemas}
    missing, stray = sorted(package - in_wheel), sorted(in_wheel - package)
    assert not missing, f"in curation/ but not in the wheel (packages/package-data?): {missing}"
    assert not stray, f"in the wheel but not in curation/: {stray}"


CHECK = textwrap.dedent(
    """
    import json, sys
    import curation
    from curation.fill._prompts import load_prompts as fill_prompts
    from curation.judge import load_prompts as judge_prompts
    from curation.schemas import field_names, load_schema, schema_dir, validate_record

    load_schema("item")
    names = sorted(p.name.removesuffix(".schema.json") for p in schema_dir().glob("*.schema.json"))
    for name in names:
        assert load_schema(name)["title"] == name, name

    item = dict.fromkeys(field_names("item"))
    item.update(benchmark="toy", item="q1", domain="math", question="1 + 1?", answer="2",
                answer_type="numeric", source="tests", license="MIT", origin="original",
                metadata="{}")
    response = dict.fromkeys(field_names("response"))
    response.update(benchmark="toy", model="m", item="q1", n_trials=2, n_correct=1,
                    source="imported")
    assert validate_record(item, "item") is None
    assert validate_record(response, "response") is None
    assert validate_record(dict(item, answer_type="guess"), "item")[0] == "answer_type"
    assert validate_record(dict(response, n_trials=0), "response")[0] == "n_trials"
    fill_prompts()
    judge_prompts()
    print(json.dumps({"prefix": sys.prefix, "curation": curation.__file__,
                      "schema_dir": str(schema_dir()), "schemas": names}))
    """
)


def _venv_with_wheel(venv: Path, wheel: Path) -> Path:
    """A new venv with only the wheel installed; the dependencies come from this environment.

    ``--system-site-packages`` would not do: from inside a venv (as the tests run) it exposes
    the base interpreter's packages, not this venv's. So a .pth file appends this
    environment's site folders instead. It is written after the install, so pip never sees
    the editable benchcurate of this environment, and it adds plain paths (their own .pth
    files, the editable finder among them, are not run), so the package can only come from
    the wheel.
    """
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    # Without the checkout on PYTHONPATH: pip would see its egg-info and install nothing.
    clean = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
    _run([*PIP, "--python", python, "install", "--no-deps", "--no-index", wheel], env=clean)
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    ours = [*site.getsitepackages(), sysconfig.get_path("purelib")]
    if site.ENABLE_USER_SITE:
        ours.append(site.getusersitepackages())
    lines = dict.fromkeys(p for p in ours if Path(p).is_dir())
    Path(purelib.stdout.strip(), "_benchcurate_test_deps.pth").write_text("\n".join(lines) + "\n")
    return python


def test_installed_wheel_validates_from_an_empty_folder(
    source: list[str], wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    python = _venv_with_wheel(venv, wheel)
    empty = tmp_path / "empty"
    empty.mkdir()
    check = tmp_path / "check.py"
    check.write_text(CHECK, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
    # -I: no PYTHONPATH, no user site, neither the script's nor the current folder on sys.path.
    out = _run([python, "-I", check], cwd=empty, env=env).stdout
    report = json.loads(out.strip().splitlines()[-1])

    installed = Path(report["prefix"]).resolve()
    assert installed == venv.resolve()
    curation_dir = Path(report["curation"]).resolve().parent
    assert curation_dir.is_relative_to(installed), "curation was imported from outside the venv"
    assert not curation_dir.is_relative_to(REPO)
    assert Path(report["schema_dir"]).resolve() == curation_dir / "_schemas"
    expected = sorted(f.removesuffix(".schema.json") for f in _schema_files(source))
    assert report["schemas"] == expected

    # The console script works from the wheel too.
    curate = venv / ("Scripts/curate.exe" if os.name == "nt" else "bin/curate")
    assert "usage" in _run([curate, "--help"], cwd=empty, env=env).stdout.lower()


def test_wheel_keeps_ranges_that_the_lock_satisfies(wheel: Path) -> None:
    """Library users get the ranges, not the lock's pins, and the lock lies inside them."""
    with zipfile.ZipFile(wheel) as zf:
        (meta,) = (n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        lines = zf.read(meta).decode().splitlines()
    requires = [
        Requirement(line.split(":", 1)[1]) for line in lines if line.startswith("Requires-Dist:")
    ]
    assert len(requires) >= 20
    pins = pinned_here(REPO / "requirements" / "test.txt")
    for req in requires:
        assert all(s.operator != "==" for s in req.specifier), f"the wheel pins {req}"
        extra = next(
            (
                e
                for e in ("dev", "bayes", "inspect", "bench")
                if req.marker and req.marker.evaluate({"extra": e})
            ),
            "",
        )
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        if extra == "bench":
            continue
        version = pins[canonicalize_name(req.name)]
        assert req.specifier.contains(version, prereleases=True), (
            f"lock {req.name}=={version} vs {req}"
        )
