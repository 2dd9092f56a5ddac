"""Every public name of every ``curation`` package says what it is for.

ruff's D102/D103 skip modules whose name starts with ``_`` — and the packages keep their
code in exactly those (``curation.<pkg>._thing``), exported through ``lazy_exports``. So
this test walks what users import: each package's ``__all__``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import curation


def _public_modules() -> list[ModuleType]:
    out = [curation]
    for info in pkgutil.walk_packages(curation.__path__, "curation."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            out.append(importlib.import_module(info.name))
    return out


def _generated_doc(cls: type) -> str:
    """The docstring ``dataclasses`` writes for a class without one: its signature."""
    try:
        return cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
    except (TypeError, ValueError):
        return ""


def undocumented(module: ModuleType) -> list[str]:
    """The functions and classes of ``module.__all__`` (defined in curation) without a
    docstring of their own."""
    missing = []
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if not getattr(obj, "__module__", "").startswith("curation"):
            continue
        doc = (obj.__doc__ or "").strip()
        if not doc or (inspect.isclass(obj) and doc == _generated_doc(obj)):
            missing.append(f"{module.__name__}.{name} (defined in {obj.__module__})")
    return missing


def test_every_exported_function_and_class_has_a_docstring() -> None:
    modules = _public_modules()
    assert len(modules) > 20  # the walk found the packages
    missing = sorted({m for mod in modules for m in undocumented(mod)})
    assert not missing, "write a docstring for:\n" + "\n".join(missing)


def test_the_check_sees_a_missing_docstring_and_a_dataclass_signature() -> None:
    from dataclasses import dataclass

    def bare() -> None:
        pass

    @dataclass
    class Record:
        x: int

    fake = ModuleType("fake")
    fake.__all__ = ["bare", "Record"]  # type: ignore[attr-defined]
    fake.bare = bare  # type: ignore[attr-defined]
    fake.Record = Record  # type: ignore[attr-defined]
    for obj in (bare, Record):
        obj.__module__ = "curation.fake"
    assert undocumented(fake) == [
        "fake.bare (defined in curation.fake)",
        "fake.Record (defined in curation.fake)",
    ]
