"""What measuring new items on a benchmark needs, read from params; the panel that does it.

The settings are params.yaml ``calibrate`` (:class:`CalibrateSettings`); its
``backend`` follows ``collect.backend`` when null (:attr:`PanelSetup.backend` is the
one the run uses).

The panel that calibrates new items must be models *in the benchmark's calibration*
(online calibration holds their abilities fixed; a model without an ability has no
place on the scale). Offline (``backend: simulate``) the panel is the calibration's
models, answering by σ(θ̂_j − b) with exactly the calibration's θ̂_j, so the online
estimate of a child's b is consistent with its latent b. With endpoints
(``backend: openai``) it is the ``panel.models`` that are in the calibration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curation.calibrate._settings import CalibrateSettings
from curation.errors import ConfigError
from curation.grading import GradingSettings
from curation.io.tables import require_output
from curation.irt import Calibration
from curation.llm import CollectSettings, LLMSettings, PanelModel, backend_kind
from curation.paths import calibration_path
from curation.settings import BackendName

if TYPE_CHECKING:
    from curation.params_model import ParamsFile


@dataclass(frozen=True)
class PanelSetup:
    """What answering and calibrating new items on a benchmark needs, read from params.

    Shared by the fill stage and ``curate review recalibrate``, so both measure new items
    with the same panel, settings and calibration.
    """

    benchmark: str
    settings: CalibrateSettings
    backend: BackendName
    """``settings.backend``, or ``collect.backend`` when that is null."""
    llm: LLMSettings
    collect: CollectSettings
    grading: GradingSettings
    calibration: Calibration
    calibration_file: Path
    panel: list[PanelModel]

    @property
    def simulated(self) -> bool:
        """The seeded simulation answers (records say ``source = simulated``)."""
        return backend_kind(self.backend).simulated

    def provenance(self) -> dict[str, Any]:
        """What a measurement was made with (for a record's lineage)."""
        s = self.settings
        return {
            "calibration": str(self.calibration_file),
            "backend": self.backend,
            "panel": [m.name for m in self.panel],
            "adaptive": s.adaptive.model_dump(),
            "tolerance": s.tolerance,
            "seed": s.seed,
        }


def select_panel(
    settings: CalibrateSettings,
    calibration: Calibration,
    configured: Sequence[PanelModel] | None,
    *,
    backend: BackendName,
    benchmark: str,
    params_file: str = "params.yaml",
) -> list[PanelModel]:
    """The panel that calibrates new items (see the module docstring)."""
    where = f"{params_file}: calibrate.panel"
    abilities = calibration.abilities
    if backend_kind(backend).simulated:
        names = list(settings.panel or calibration.panel)
        unknown = [n for n in names if n not in abilities]
        if unknown:
            raise ConfigError(
                f"{where}: {unknown} not in the calibration of {benchmark!r} "
                f"(models: {', '.join(calibration.panel)})"
            )
        return [
            PanelModel(name=n, model_id=n, temperature=0.0, max_tokens=64, ability=abilities[n])
            for n in names
        ]
    by_name = {m.name: m for m in configured or ()}
    if settings.panel is not None:
        missing = [n for n in settings.panel if n not in by_name]
        if missing:
            raise ConfigError(f"{where}: {missing} are not in panel.models")
        unknown = [n for n in settings.panel if n not in abilities]
        if unknown:
            raise ConfigError(
                f"{where}: {unknown} have no ability in the calibration of {benchmark!r}; "
                "online calibration can only use calibrated models"
            )
        chosen = [by_name[n] for n in settings.panel]
    else:
        chosen = [m for m in configured or () if m.name in abilities]
    if len(chosen) < 2:
        raise ConfigError(
            f"{where}: online calibration needs at least 2 panel models that are in the "
            f"calibration of {benchmark!r}; panel.models has "
            f"{[m.name for m in configured or ()]}, the calibration has "
            f"{list(calibration.panel)[:8]}{'…' if len(calibration.panel) > 8 else ''}. "
            "Collect this benchmark's responses with your panel (collect.enabled: true) and "
            "re-run annotate, or use calibrate.backend: simulate"
        )
    return chosen


def panel_setup(
    benchmark: str,
    *,
    params: ParamsFile,
    settings: CalibrateSettings | None = None,
    params_file: str = "params.yaml",
) -> PanelSetup:
    """The calibration settings (params.yaml ``calibrate``, or ``settings`` when a caller
    measures with a variant of them), the benchmark's calibration and the panel models
    that are in it."""
    settings = params.calibrate if settings is None else settings
    backend = settings.backend_or(params.collect.backend)
    cal_file = require_output(calibration_path(benchmark), produced_by=f"annotate@{benchmark}")
    calibration = Calibration.load(cal_file)
    configured = (
        None
        if backend_kind(backend).simulated or params.panel is None
        else list(params.panel.models)
    )
    return PanelSetup(
        benchmark=benchmark,
        settings=settings,
        backend=backend,
        llm=params.llm,
        collect=params.collect,
        grading=params.benchmarks[benchmark].grading,
        calibration=calibration,
        calibration_file=cal_file,
        panel=select_panel(
            settings,
            calibration,
            configured,
            backend=backend,
            benchmark=benchmark,
            params_file=params_file,
        ),
    )
