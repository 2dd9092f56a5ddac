"""``benchmarks.<b>``: one benchmark of params.yaml (items, responses, provenance).

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``. The entry's key is the benchmark's name: it
names files (``data/raw/<b>/``), DVC stages (``ingest@<b>``) and dataset configs, so one
rule (:data:`BENCHMARK_NAME`) holds for it wherever a name is accepted.
"""

from __future__ import annotations

import re
from typing import Annotated, Self

from pydantic import AfterValidator, Field, model_validator

from curation.grading import GradingSettings
from curation.items import ItemsSettings
from curation.responses import ResponsesSettings
from curation.settings import Section

BENCHMARK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
"""Letters, digits, ``-`` and ``_`` (a letter or digit first): what DVC stage names
(``stage@<b>``; DVC reads a ``.`` as nesting), file systems and HF config names all take."""


def check_benchmark_name(name: str) -> str:
    """``name`` when it follows :data:`BENCHMARK_NAME` (else a ValueError saying the rule)."""
    if not BENCHMARK_NAME.match(name):
        raise ValueError(
            "not a benchmark name: use letters, digits, '-' and '_', starting with a letter "
            "or digit (DVC reads a '.' in a stage name as nesting)"
        )
    return name


BenchmarkName = Annotated[str, AfterValidator(check_benchmark_name)]
"""A key of ``benchmarks``: checked against :data:`BENCHMARK_NAME`."""


class BenchmarkSettings(Section):
    """``benchmarks.<b>``: one benchmark."""

    domain: str
    """Its domain (math, code, …): benchmarks of one domain rank models against each other."""
    license: str
    """The items' license, recorded on every item and in the dataset card."""
    source: str
    """Where the items come from, recorded on every item and in the dataset card."""
    items: ItemsSettings
    responses: ResponsesSettings | None = None
    """The response matrix to import (unset: the panel answers, ``collect.enabled``)."""
    grading: GradingSettings = GradingSettings()
    lm_eval_tasks: list[Annotated[str, Field(min_length=1)]] | None = None
    """lm-eval task names whose logs ``curate responses import`` accepts (default: the
    benchmark's name and its variants, e.g. gsm8k_cot)."""
    in_domain_reference: bool = True
    """False: left out of the domain reference ranking of the other benchmarks (adding it
    changes no one else's Kendall tau)."""
    citation: str | None = None
    """BibTeX of the source benchmark, printed in the dataset card's Citation section."""
    source_datasets: list[Annotated[str, Field(min_length=1)]] | None = None
    """Hub ids of the source datasets, in the dataset card's YAML header."""
    limit: Annotated[int, Field(ge=1)] | None = None
    """Keep only the first N items (ingest), e.g. to try a real local panel on a few;
    every later stage sees the slice."""

    @model_validator(mode="after")
    def _matrix_only_names_its_matrix(self) -> Self:
        """``items.texts: false`` takes the item ids from the response matrix, and DVC reads
        ``items.path`` as the ingest stage's dep: the two paths must be one file."""
        if not self.items.texts and (
            self.responses is None or self.responses.path != self.items.path
        ):
            raise ValueError(
                "items.texts: false (a matrix-only benchmark) takes its item ids from the "
                "response matrix: set items.path to the same file as responses.path"
            )
        return self
