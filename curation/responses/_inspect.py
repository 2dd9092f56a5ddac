"""Reading inspect_ai evaluation logs (``.eval`` and ``.json``) as response cells.

inspect writes one log per (task, model) run: ``.eval`` files are zip archives
(zstd-compressed in recent versions, which Python 3.11's ``zipfile`` cannot open) and
``.json`` files one JSON document; their layout changes between releases. So they are
read only through inspect's own ``inspect_ai.log.read_eval_log`` (the optional extra
``benchcurate[inspect]``), never parsed by hand.

What becomes a cell: each sample's ``id`` is the item, each epoch one trial, and the
chosen scorer's value the verdict. Values map as inspect's own ``value_to_float``
does: ``C`` (correct) 1, ``I`` (incorrect) 0, ``N`` (no answer) 0, ``P`` (partial) 0.5,
booleans 1/0, numbers as they are. A 0/1 value is a verdict; anything else (``P``, a
0.73 similarity) counts as correct only with an explicit ``threshold`` (value >=
threshold), because silently rounding it would change ``n_correct``. The model is the
log header's ``eval.model`` (``openai/gpt-4o``), unless ``model`` overrides it.
"""

from __future__ import annotations

import glob
import warnings
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from curation.errors import InputError

INSTALL_HINT = "pip install 'benchcurate[inspect]'"
_LETTERS = {"C": 1.0, "I": 0.0, "N": 0.0, "P": 0.5}
_SKIP_FIELDS = {"messages", "events", "store", "attachments"}
"""Sample fields never needed here; leaving them out makes big ``.eval`` logs quick to read."""


@dataclass(frozen=True)
class InspectRead:
    """What :func:`read_inspect` read: the cells and how they were chosen."""

    cells: pl.DataFrame
    task: str
    scorer: str
    n_samples: int
    models: tuple[str, ...]
    n_logs: int
    n_unscored: int
    threshold: float | None = None

    def summary(self) -> str:
        """One line: task, scorer, samples, models, logs (and samples without a score)."""
        scorer = self.scorer if self.threshold is None else f"{self.scorer} >= {self.threshold:g}"
        text = (
            f"inspect: task {self.task}, scorer {scorer}, {self.n_samples} samples, "
            f"{len(self.models)} models from {self.n_logs} logs"
        )
        if self.n_unscored:
            text += f"; {self.n_unscored} sample epochs had no score and are left out"
        return text


def _read_eval_log() -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(
            f"reading inspect_ai logs needs the inspect extra: {INSTALL_HINT}"
        ) from None
    return read_eval_log


def _files(path_or_glob: str | Path) -> list[Path]:
    path = Path(path_or_glob)
    if path.is_file():
        found = [path]
    elif path.is_dir():
        found = sorted({*path.rglob("*.eval"), *path.rglob("*.json")})
    else:
        found = sorted(Path(p) for p in glob.glob(str(path_or_glob), recursive=True))
        found = [p for p in found if p.is_file() and p.suffix in (".eval", ".json")]
    if not found:
        raise InputError(
            "no inspect logs found (expected .eval or .json files written by inspect eval)",
            file=str(path_or_glob),
        )
    return found


def _scorer_names(log: Any) -> list[str]:
    """Scorers of a log in the order inspect lists them (results, else first sample)."""
    names: list[str] = []
    results = getattr(log, "results", None)
    for score in getattr(results, "scores", None) or []:
        if score.name not in names:
            names.append(score.name)
    for sample in log.samples or []:
        for name in sample.scores or {}:
            if name not in names:
                names.append(name)
    return names


def _as_number(value: Any, *, scorer: str, file: str, where: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value.strip().upper() in _LETTERS:
        return _LETTERS[value.strip().upper()]
    if isinstance(value, Mapping):
        raise InputError(
            f"scorer {scorer!r} gives a dict of values ({', '.join(map(str, value))}), not "
            "one verdict; inspect logs such a scorer's parts as separate scores only when "
            "they are separate scorers",
            file=file,
            record=where,
            field=scorer,
        )
    raise InputError(
        f"scorer {scorer!r}: value {value!r} is not C/I/P/N, a boolean or a number",
        file=file,
        record=where,
        field=scorer,
    )


def _verdict(value: float, *, threshold: float | None, scorer: str, file: str, where: str) -> int:
    if threshold is not None:
        return int(value >= threshold)
    if value in (0.0, 1.0):
        return int(value)
    raise InputError(
        f"scorer {scorer!r} gives {value:g} (P = partial is 0.5), not a 0/1 verdict: pass "
        f"--threshold T to count {scorer} >= T as correct",
        file=file,
        record=where,
        field=scorer,
    )


def _choose_scorer(names: list[str], scorer: str | None, *, file: str) -> str:
    if scorer is not None:
        if scorer not in names:
            raise InputError(
                f"no scorer {scorer!r} in this log (scorers: {', '.join(names) or 'none'})",
                file=file,
                field="scorer",
            )
        return scorer
    if len(names) == 1:
        return names[0]
    if not names:
        raise InputError("the log holds no scores (was the task scored?)", file=file)
    raise InputError(
        f"the log has several scorers ({', '.join(names)}); choose one with --scorer "
        "(their verdicts differ)",
        file=file,
        field="scorer",
    )


def read_inspect(
    path_or_glob: str | Path,
    *,
    model: str | None = None,
    scorer: str | None = None,
    threshold: float | None = None,
) -> InspectRead:
    """Read inspect_ai logs of one task into ``(model, item, n_trials, n_correct)`` cells.

    ``path_or_glob``: a ``.eval``/``.json`` log, a folder (searched recursively) or a
    glob. ``model``: the model name for every log (default: each log's ``eval.model``).
    ``scorer``: which scorer's value is the verdict, required when a log has several.
    ``threshold``: count a value that is not 0/1 as correct when ``value >= threshold``.
    When the same model appears in several logs (reruns), the newest log wins, with
    a warning. Problems are raised as :class:`InputError` naming the file.
    """
    read_eval_log = _read_eval_log()
    logs: list[tuple[Path, Any]] = []
    for path in _files(path_or_glob):
        try:
            log = read_eval_log(str(path), exclude_fields=_SKIP_FIELDS)
        except Exception as exc:  # inspect raises its own and pydantic's errors
            if path.suffix == ".json" and not Path(path_or_glob).is_file():
                continue  # a folder's other JSON files (not logs) are no business of ours
            raise InputError(f"not an inspect log ({type(exc).__name__})", file=str(path)) from None
        logs.append((path, log))
    if not logs:
        raise InputError("no inspect logs found", file=str(path_or_glob))
    tasks = sorted({log.eval.task for _, log in logs})
    if len(tasks) > 1:
        raise InputError(
            f"logs of several tasks matched ({', '.join(tasks)}); read one task at a time",
            file=str(path_or_glob),
        )
    newest: dict[str, tuple[Path, Any]] = {}
    for path, log in sorted(logs, key=lambda pl_: str(pl_[1].eval.created)):
        name = model or str(log.eval.model)
        if log.status != "success":
            warnings.warn(
                f"{path.name}: status {log.status}; reading its scored samples", stacklevel=2
            )
        if name in newest:
            warnings.warn(
                f"{name}: several logs for task {tasks[0]}; using the newest, {path.name}",
                stacklevel=2,
            )
        newest[name] = (path, log)
    chosen = scorer
    rows: dict[tuple[str, str], list[int]] = {}
    unscored = 0
    for name, (path, log) in newest.items():
        file = str(path)
        chosen = _choose_scorer(_scorer_names(log), chosen, file=file)
        for sample in log.samples or []:
            where = f"sample {sample.id!r} epoch {sample.epoch}"
            score = (sample.scores or {}).get(chosen)
            if score is None:
                unscored += 1
                continue
            value = _as_number(score.value, scorer=chosen, file=file, where=where)
            ok = _verdict(value, threshold=threshold, scorer=chosen, file=file, where=where)
            cell = rows.setdefault((name, str(sample.id)), [0, 0])
            cell[0] += 1
            cell[1] += ok
    if chosen is None or not rows:
        raise InputError("no scored samples in the logs", file=str(path_or_glob))
    cells = pl.DataFrame(
        [(m, i, t, c) for (m, i), (t, c) in rows.items()],
        schema={"model": pl.String, "item": pl.String, "n_trials": pl.Int64, "n_correct": pl.Int64},
        orient="row",
    ).sort("model", "item")
    return InspectRead(
        cells=cells,
        task=tasks[0],
        scorer=chosen,
        n_samples=cells["item"].n_unique(),
        models=tuple(sorted(newest)),
        n_logs=len(newest),
        n_unscored=unscored,
        threshold=threshold,
    )


def inspect_responses(
    path_or_glob: str | Path,
    *,
    benchmark: str,
    known_items: Collection[str],
    items_file: str,
    model: str | None = None,
    scorer: str | None = None,
    threshold: float | None = None,
) -> tuple[pl.DataFrame, InspectRead]:
    """inspect logs as the validated response table of ``benchmark`` (source imported).

    Every sample id must be one of ``known_items`` (the ingested item ids).
    """
    from curation.schemas import conform, validate_frame

    read = read_inspect(path_or_glob, model=model, scorer=scorer, threshold=threshold)
    known = set(known_items)
    unknown = [
        i for i in read.cells["item"].unique(maintain_order=True).to_list() if i not in known
    ]
    if unknown:
        raise InputError(
            f"{len(unknown)} sample ids of inspect task {read.task!r} are not items of "
            f"benchmark {benchmark!r} ({items_file}), e.g. {unknown[0]!r}; the sample id "
            "must be the benchmark's item id",
            file=str(path_or_glob),
            field="id",
        )
    table = read.cells.with_columns(
        pl.lit(benchmark).alias("benchmark"), pl.lit("imported").alias("source")
    )
    table = conform(table, "response").sort("model", "item")
    validate_frame(table, "response", file=str(path_or_glob))
    return table, read
