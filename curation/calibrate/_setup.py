"""What answering and calibrating new items on a benchmark needs, read from params."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.fill import FillSettings, fill_settings, select_panel
from curation.grading import GradingSettings, grading_settings
from curation.io.tables import require_output
from curation.irt import Calibration
from curation.llm import (
    CollectSettings,
    LLMSettings,
    PanelModel,
    collect_settings,
    llm_settings,
    panel_models,
)
from curation.params import benchmark_spec
from curation.paths import calibration_path


@dataclass(frozen=True)
class PanelSetup:
    """What answering and calibrating new items on a benchmark needs, read from params.

    Shared by the fill stage and ``curate review recalibrate``, so both measure new items
    with the same panel, settings and calibration.
    """

    settings: FillSettings
    llm: LLMSettings
    collect: CollectSettings
    grading: GradingSettings
    calibration: Calibration
    calibration_file: Path
    panel: list[PanelModel]


def panel_setup(
    params: dict[str, Any], benchmark: str, *, params_file: str = "params.yaml"
) -> PanelSetup:
    """Settings, the benchmark's calibration and the panel models that are in it."""
    spec = benchmark_spec(params, benchmark, params_file=params_file)
    settings = fill_settings(params, params_file=params_file)
    cal_file = require_output(calibration_path(benchmark), produced_by=f"annotate@{benchmark}")
    calibration = Calibration.load(cal_file)
    configured = (
        panel_models(params, params_file=params_file) if settings.backend == "openai" else None
    )
    return PanelSetup(
        settings=settings,
        llm=llm_settings(params, params_file=params_file),
        collect=collect_settings(params, params_file=params_file),
        grading=grading_settings(
            spec.extra.get("grading"), where=f"{params_file}: benchmarks.{benchmark}.grading"
        ),
        calibration=calibration,
        calibration_file=cal_file,
        panel=select_panel(
            settings, calibration, configured, benchmark=benchmark, params_file=params_file
        ),
    )
