"""The validity hook an LLM judge plugs into (BenchFill step 4): ``fill.judge``.

BenchFill calls ``await judge.judge(candidate, parent)`` on every child that passed the
mechanical checks (parsed, gradable, not a near-duplicate) and before the panel is
paid to answer it; the interface (:class:`curation.candidates.Judge`, returning a
:class:`curation.candidates.Verdict`) lives with the candidate record. A verdict that
fails any check makes the candidate ``judge-rejected`` with the verdict's reason;
every verdict fills the ``judge_*`` columns. With no judge configured those columns
stay null. ``fill.judge: "module:factory"`` names the factory that builds the judge.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from curation.candidates import Judge
from curation.errors import ConfigError

JudgeFactory = Callable[..., Judge]
"""``factory(params: ParamsFile, *, params_file, benchmark) -> Judge``, named in
``fill.judge``: it gets the validated params file (:class:`curation.params_model.ParamsFile`)."""


def load_judge_factory(spec: str, *, where: str) -> JudgeFactory:
    """Import ``module:attribute`` (e.g. ``curation.judge:fill_judge``)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{where}: expected 'module:factory', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{where}: cannot import {module_name!r}: {exc}") from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ConfigError(f"{where}: {module_name!r} has no callable {attr!r}")
    return factory
