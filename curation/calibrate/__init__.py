"""Measuring new items on a benchmark's IRT scale (SPEC §3.3, online calibration).

BenchFill (:mod:`curation.fill`) and ``curate review recalibrate`` both put new items
on the scale of an existing calibration, with the same panel and settings: the
panel answers (through :mod:`curation.llm`: same prompts, cache and graders as
``collect``), the abilities θ̂_j stay fixed, and only each new item's b (with its
standard error) is fitted, in batches until the adaptive rule closes it. This package
is their shared home; it builds on :mod:`curation.irt` and :mod:`curation.llm` and
knows nothing of the search that proposes the items.

* :class:`CalibrateSettings` — params.yaml ``calibrate`` (backend, seed, panel,
  adaptive, tolerance); :class:`AdaptiveSettings` — the stopping rule of trial
  allocation.
* :func:`panel_setup` → :class:`PanelSetup` — settings, calibration and the panel
  (:func:`select_panel`) of one benchmark.
* :func:`open_panel` → :class:`Panel` — the one backend factory: the seeded
  simulation (``backend: simulate``; records say ``source = simulated``) or the
  OpenAI-compatible endpoints (``openai``).
* :func:`annotate` — ask the panel about :class:`Child` items with adaptive trials and
  calibrate them online → :class:`Annotation` per child, each closed with a
  :data:`CalibrationOutcome` (BenchFill: around a target z*); :func:`measure` — the
  same without a search (no off-target stop; ``curate review recalibrate``);
  :func:`decide` is the stopping rule itself; :func:`on_target_consistent` — "on
  target" only when the interval agrees (within the tolerance, or SE ≤ tolerance/2).
* :func:`record_measurement` — a :class:`~curation.candidates.Candidate` with an
  annotation's counts, b, SE and z; :func:`describe` (its status reason),
  :func:`annotation_lineage` and :func:`simulation_lineage` (its lineage).
* :func:`gradable_problem` — why a new item's answer cannot be graded (checked first).
* :func:`b_of_z`, :func:`z_slope` — the calibration's z map, inverted and differentiated;
  :func:`equal_score_b` — a difficulty in the frame of other abilities (same expected
  panel score).
* Simulation: :class:`SimulatedWorld` (:class:`WorldSettings`, :class:`WorldBackend`)
  — a truth drawn around the fit (true abilities, 2PL, model × item effects), so an
  offline evaluation is not circular; :func:`simulated_header`, :func:`latent_of`,
  :func:`strip_simulated_header`
  — the header in which a simulated rewrite states the latent b it is answered from.
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.calibrate._annotate import (
        BUDGET,
        MEASURED,
        OFF_TARGET,
        ON_TARGET,
        OUTCOMES,
        STOPPED,
        Z90,
        Annotation,
        CalibrationOutcome,
        Child,
        Panel,
        annotate,
        annotation_lineage,
        b_of_z,
        calibrate_annotations,
        decide,
        describe,
        on_target_consistent,
        z_slope,
    )
    from curation.calibrate._backend import LatentB, open_panel, stated_latent
    from curation.calibrate._frame import equal_score_b
    from curation.calibrate._gradable import gradable_problem
    from curation.calibrate._measure import (
        NO_TARGET,
        measure,
        record_measurement,
        simulation_lineage,
    )
    from curation.calibrate._settings import AdaptiveSettings, CalibrateSettings, WorldSettings
    from curation.calibrate._setup import PanelSetup, panel_setup, select_panel
    from curation.calibrate._simulate import header as simulated_header
    from curation.calibrate._simulate import latent_of
    from curation.calibrate._simulate import strip_header as strip_simulated_header
    from curation.calibrate._world import SimulatedWorld, WorldBackend

_EXPORTS = {
    "BUDGET": "_annotate",
    "MEASURED": "_annotate",
    "NO_TARGET": "_measure",
    "OFF_TARGET": "_annotate",
    "ON_TARGET": "_annotate",
    "OUTCOMES": "_annotate",
    "STOPPED": "_annotate",
    "Z90": "_annotate",
    "AdaptiveSettings": "_settings",
    "Annotation": "_annotate",
    "CalibrationOutcome": "_annotate",
    "CalibrateSettings": "_settings",
    "Child": "_annotate",
    "LatentB": "_backend",
    "Panel": "_annotate",
    "PanelSetup": "_setup",
    "SimulatedWorld": "_world",
    "WorldBackend": "_world",
    "WorldSettings": "_settings",
    "annotate": "_annotate",
    "annotation_lineage": "_annotate",
    "b_of_z": "_annotate",
    "calibrate_annotations": "_annotate",
    "decide": "_annotate",
    "describe": "_annotate",
    "equal_score_b": "_frame",
    "gradable_problem": "_gradable",
    "latent_of": "_simulate",
    "measure": "_measure",
    "on_target_consistent": "_annotate",
    "open_panel": "_backend",
    "panel_setup": "_setup",
    "record_measurement": "_measure",
    "select_panel": "_setup",
    "simulated_header": "_simulate:header",
    "simulation_lineage": "_measure",
    "stated_latent": "_backend",
    "strip_simulated_header": "_simulate:strip_header",
    "z_slope": "_annotate",
}

__all__ = [
    "BUDGET",
    "MEASURED",
    "NO_TARGET",
    "OFF_TARGET",
    "ON_TARGET",
    "OUTCOMES",
    "STOPPED",
    "Z90",
    "AdaptiveSettings",
    "Annotation",
    "CalibrationOutcome",
    "CalibrateSettings",
    "Child",
    "LatentB",
    "Panel",
    "PanelSetup",
    "SimulatedWorld",
    "WorldBackend",
    "WorldSettings",
    "annotate",
    "annotation_lineage",
    "b_of_z",
    "calibrate_annotations",
    "decide",
    "describe",
    "equal_score_b",
    "gradable_problem",
    "latent_of",
    "measure",
    "on_target_consistent",
    "open_panel",
    "panel_setup",
    "record_measurement",
    "select_panel",
    "simulated_header",
    "simulation_lineage",
    "stated_latent",
    "strip_simulated_header",
    "z_slope",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
