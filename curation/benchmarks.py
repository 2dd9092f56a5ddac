"""``benchmarks.<b>``: one benchmark of params.yaml (items, responses, provenance).

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    Field,
)

from curation.grading import GradingSettings
from curation.items import ItemsSettings
from curation.responses import ResponsesSettings
from curation.settings import Section


class BenchmarkSettings(Section):
    """``benchmarks.<b>``: one benchmark."""

    domain: str
    license: str
    source: str
    items: ItemsSettings
    responses: ResponsesSettings | None = None
    grading: GradingSettings = GradingSettings()
    lm_eval_tasks: list[Annotated[str, Field(min_length=1)]] | None = None
    in_domain_reference: bool = True
    citation: str | None = None
    """BibTeX of the source benchmark, printed in the dataset card's Citation section."""
    source_datasets: list[Annotated[str, Field(min_length=1)]] | None = None
    """Hub ids of the source datasets, in the dataset card's YAML header."""
    limit: Annotated[int, Field(ge=1)] | None = None
    """Keep only the first N items (ingest), e.g. to try a real local panel on a few."""
