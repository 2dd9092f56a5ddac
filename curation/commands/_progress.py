"""What `curate progress-test` and `curate power` compute: is a new checkpoint better, and
could it show? (Their arguments are in ``progress_test.py`` and ``power.py``.)

Both read a benchmark's difficulties from the `annotate` stage. The progress test takes
two checkpoints' responses (two models of a response table, or two files); the power
command reproduces Theorem 2.3 on the benchmark's own gaps.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from tabulate import tabulate

from curation.errors import ConfigError, InputError
from curation.io.atomic import write_json
from curation.io.readers import detect_format, read_frame
from curation.io.tables import read_table
from curation.measure import contrast_widths, power_curve, power_table, progress_test
from curation.paths import difficulty_path, power_plot_path, responses_path
from curation.plots.measure import plot_power_curves


def _checkpoint(table: pl.DataFrame, model: str, *, file: str) -> pl.DataFrame:
    rows = table.filter(pl.col("model") == model)
    if rows.height == 0:
        models = ", ".join(sorted(table["model"].unique().to_list())[:10])
        raise InputError(
            f"no responses of model {model!r} (has: {models})", file=file, field="model"
        )
    return rows.group_by("item").agg(pl.col("n_correct").sum(), pl.col("n_trials").sum())


def _load_responses(path: Path | None, benchmark: str) -> tuple[pl.DataFrame, str]:
    if path is None:
        file = responses_path(benchmark)
        return read_table(file, produced_by=f"responses@{benchmark}"), str(file)
    frame = read_frame(path, detect_format(path))
    for col in ("model", "item", "n_trials", "n_correct"):
        if col not in frame.columns:
            raise InputError("required column missing", file=str(path), field=col)
    return frame.with_columns(
        pl.col("item").cast(pl.String),
        pl.col("n_trials").cast(pl.Int64),
        pl.col("n_correct").cast(pl.Int64),
    ), str(path)


def run_progress_test(
    *,
    benchmark: str,
    model_a: str,
    model_b: str,
    responses: Path | None = None,
    n_bins: int = 5,
    n_permutations: int = 9999,
    seed: int = 0,
    out: Path | None = None,
) -> str:
    """Stratified randomisation test of "B is better than A" on the items both answered."""
    difficulty = read_table(difficulty_path(benchmark), produced_by=f"annotate@{benchmark}")
    table, file = _load_responses(responses, benchmark)
    a = _checkpoint(table, model_a, file=file)
    b = _checkpoint(table, model_b, file=file)
    joined = (
        difficulty.select("item", "z")
        .join(a, on="item")
        .join(b, on="item", suffix="_b")
        .sort("item")
    )
    if joined.height == 0:
        raise InputError(
            f"{model_a} and {model_b} share no item with the calibrated benchmark {benchmark}",
            file=file,
        )
    result = progress_test(
        joined["n_correct"].to_numpy(),
        joined["n_correct_b"].to_numpy(),
        joined["z"].to_numpy(),
        trials=(joined["n_trials"].to_numpy(), joined["n_trials_b"].to_numpy()),
        n_bins=n_bins,
        n_permutations=n_permutations,
        seed=seed,
    )
    lines = [
        f"{benchmark}: is {model_b} better than {model_a}? "
        f"(stratified randomisation test, {result.n_items} items, {n_bins} z-bins, "
        f"{result.n_permutations} permutations, scheme: {result.scheme})",
        f"  score difference (B - A): {result.mean_diff:+.4f}",
        f"  stratified effect:        {result.effect:+.4f}",
        f"  one-sided p-value:        {result.p_value:.4g}",
        "",
        _indent(
            tabulate(
                [
                    (
                        f"[{s.z_low:.2f}, {s.z_high:.2f}]",
                        s.n_items,
                        s.mean_a,
                        s.mean_b,
                        f"{s.mean_diff:+.3f}",
                    )  # fmt: skip
                    for s in result.strata
                ],
                headers=("z-bin", "items", "mean A", "mean B", "B - A"),
                floatfmt=".3f",
                colalign=("left", "right", "right", "right", "right"),
            )
        ),
    ]
    if out is not None:
        write_json(
            out,
            {
                "benchmark": benchmark,
                "model_a": model_a,
                "model_b": model_b,
                **_jsonable(result.to_dict()),
            },
        )
        lines.append(f"\n  written: {out}")
    return "\n".join(lines)


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _power_with_progress(
    z: np.ndarray,
    *,
    widths: Sequence[float],
    repeats: Sequence[int],
    n_sims: int,
    alpha: float,
    seed: int,
) -> pl.DataFrame:
    """:func:`power_curve` one (width, repeats) point at a time, with a progress bar.

    One generator is threaded through the points in power_curve's own order (widths
    outer, repeats inner), so the draws, and the frame, are exactly those of a single
    ``power_curve(z, width=widths, repeats=repeats, seed=seed)`` call. The bar advances
    by each point's repeats, which is what its cost grows with.
    """
    from tqdm.auto import tqdm

    rng = np.random.default_rng(seed)
    parts = []
    reps = sorted({int(r) for r in repeats})  # power_curve's order
    total = len(widths) * sum(reps)
    off = os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true")
    with tqdm(total=total, desc="power", unit="rep", disable=True if off else None) as bar:
        for w in widths:
            for r in reps:
                parts.append(
                    power_curve(z, width=[w], repeats=[r], n_sims=n_sims, alpha=alpha, seed=rng)
                )
                bar.update(int(r))
    return pl.concat(parts)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def run_power(
    *,
    benchmark: str,
    widths: list[float] | None = None,
    repeats: list[int] | None = None,
    n_sims: int = 400,
    alpha: float = 0.05,
    seed: int = 0,
    plot: Path | None = None,
) -> str:
    """Theorem 2.3 on this benchmark: progress inside vs wider than its largest gap."""
    bad = [w for w in widths or [] if not 0.0 < w <= 1.0]
    if bad:
        raise ConfigError(f"--width: {bad[0]} is not in (0, 1] (a share of the difficulty axis)")
    difficulty = read_table(difficulty_path(benchmark), produced_by=f"annotate@{benchmark}")
    z = difficulty["z"].to_numpy()
    widths = widths or list(contrast_widths(z))
    repeats = repeats or [1, 4, 16, 64]
    frame = _power_with_progress(
        z, widths=widths, repeats=repeats, n_sims=n_sims, alpha=alpha, seed=seed
    )
    plot = plot or power_plot_path(benchmark)
    plot_power_curves(frame, plot, title=f"{benchmark}: power of the progress test")
    wide = power_table(frame)
    table = tabulate(
        wide.rows(),
        headers=wide.columns,
        floatfmt=".3f",
        colalign=("right",) * wide.width,
    )
    first = frame.row(0, named=True)
    header = (
        f"{benchmark}: rejection rate at alpha={alpha} over {n_sims} simulations, "
        f"progress centred in the largest gap (centre z={first['centre']:.3f})"
    )
    return f"{header}\n{table}\nplot: {plot}"
