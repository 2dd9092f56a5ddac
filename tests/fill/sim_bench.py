"""A synthetic benchmark for offline fill runs (simulated rewriter, panel and world).

Twelve models with abilities spread over [−2.5, 2.5] (panel scale, so z = (b + 2.5) / 5)
and 120 items spread evenly over z except for a hole at the top, (0.80, 1.0]: the
largest gaps sit at the end of the axis, as on the bundled benchmarks, where a child's
place follows the strongest models. Nothing here needs the pipeline's outputs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from curation.calibrate import CalibrateSettings, PanelSetup, select_panel
from curation.fill import FillResult, FillSettings, afill
from curation.irt import Calibration
from curation.llm import CollectSettings, CompletionCache, LLMSettings
from curation.schemas import conform

BENCH = "synthetic"
MODELS = {f"m{j:02d}": float(t) for j, t in enumerate(np.linspace(-2.5, 2.5, 12))}
SCALE = {"method": "panel", "theta_min": -2.5, "theta_max": 2.5}
ITEM_Z = np.concatenate([np.linspace(0.02, 0.8, 110), np.linspace(0.1, 0.7, 10) + 0.003])


def calibration() -> Calibration:
    return Calibration(
        model="1pl",
        abilities=dict(MODELS),
        scale=dict(SCALE),
        panel=tuple(MODELS),
        settings={"b_sd": 3.0},
        benchmark=BENCH,
    )


def tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The items and their difficulty (schemas ``item`` and ``difficulty``)."""
    n = ITEM_Z.size
    items = pl.DataFrame(
        {
            "benchmark": BENCH,
            "item": [f"s{i}" for i in range(n)],
            "domain": "math",
            "question": [f"What is {i} + {3 * i + 7}?" for i in range(n)],
            "answer": [str(4 * i + 7) for i in range(n)],
            "answer_type": "numeric",
            "choices": None,
            "source": "tests",
            "license": "MIT",
            "origin": "original",
            "metadata": "{}",
        }
    )
    b = -2.5 + 5.0 * ITEM_Z
    difficulty = pl.DataFrame(
        {
            "benchmark": BENCH,
            "item": items["item"],
            "b": b,
            "se": 0.3,
            "a": None,
            "z": ITEM_Z,
            "z_low": np.clip(ITEM_Z - 0.1, 0, 1),
            "z_high": np.clip(ITEM_Z + 0.1, 0, 1),
            "n_models": 12,
            "p_mean": 0.5,
            "bound": None,
            "model_type": "1pl",
            "method": "map",
            "interval_source": "laplace",
            "calibration": f"data/calibration/{BENCH}.json",
        }
    )
    return conform(items, "item"), conform(difficulty, "difficulty")


def run(root: Path, **fill: Any) -> FillResult:
    """One offline fill run with ``fill`` settings over the defaults (judge off)."""
    settings = FillSettings.model_validate({"judge": None, **fill})
    measuring = CalibrateSettings(backend="simulate", seed=settings.seed)
    cal = calibration()
    setup = PanelSetup(
        benchmark=BENCH,
        settings=measuring,
        backend="simulate",
        llm=LLMSettings(),
        collect=CollectSettings(),
        grading=None,
        calibration=cal,
        calibration_file=Path(f"data/calibration/{BENCH}.json"),
        panel=select_panel(measuring, cal, None, backend="simulate", benchmark=BENCH),
    )
    items, difficulty = tables()

    async def main() -> FillResult:
        with CompletionCache(root / "cache.sqlite") as cache:
            return await afill(
                benchmark=BENCH,
                items=items,
                difficulty=difficulty,
                setup=setup,
                settings=settings,
                cache=cache,
                workdir=root / "fill",
                direct_panel=True,
            )

    return asyncio.run(main())
