"""Lazy package exports: a package's public names load their module on first use.

Why: every params.yaml section is declared by a model that lives beside its package
(``curation/fill/_settings.py`` …), and :mod:`curation.params_model` imports them all to
validate the file once. If a package's ``__init__`` imported its whole implementation,
every stage would load every package (matplotlib, scipy, the LLM client, …) just to read
its params. With lazy exports ``from curation.fill import FillSettings`` loads only the
settings module. The pattern is PEP 562's module ``__getattr__``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` whose public name -> module is ``exports``.

    A module name relative to the package (``{"FillSettings": "_settings"}`` loads
    ``<package>._settings``), or absolute (``"curation.candidates"``) for a name the
    package re-exports from elsewhere; ``"_simulate:strip_header"`` exports that module's
    ``strip_header`` under the public name.
    """

    def __getattr__(name: str) -> Any:  # noqa: N807 (the module hook's name)
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = module.partition(":")
        absolute = module if module.startswith("curation.") else f"{package}.{module}"
        value = getattr(importlib.import_module(absolute), attribute or name)
        setattr(sys.modules[package], name, value)  # resolve once
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted(exports)

    return __getattr__, __dir__
