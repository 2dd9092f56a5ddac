"""Measuring new items on a benchmark's IRT scale (SPEC §3.3, online calibration).

BenchFill and ``curate review recalibrate`` both put new items on the scale of an
existing calibration, with the same panel and settings; this package is their shared
home, so neither reaches into the other's private modules.
"""

from curation.calibrate._setup import PanelSetup, panel_setup

__all__ = ["PanelSetup", "panel_setup"]
