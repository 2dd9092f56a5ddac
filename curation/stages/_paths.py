"""Where each stage reads and writes, per benchmark (the same names dvc.yaml declares)."""

from __future__ import annotations

from pathlib import Path


def items_path(benchmark: str) -> Path:
    return Path("data/items") / f"{benchmark}.parquet"


def responses_path(benchmark: str) -> Path:
    return Path("data/responses") / f"{benchmark}.parquet"


def check_metrics_path(benchmark: str) -> Path:
    return Path("metrics/check") / f"{benchmark}.json"


def check_report_path(benchmark: str) -> Path:
    return Path("reports/check") / f"{benchmark}.md"


def check_plot_path(benchmark: str) -> Path:
    return Path("plots/check") / f"{benchmark}.png"
