"""The log-reader registry: the one table `curate responses import --format` reads."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from curation.cli import build_parser
from curation.errors import InputError
from curation.responses import READERS, LogOptions, log_reader, read_cells

FIXTURES = Path(__file__).parent / "fixtures" / "lm_eval"


def _format_action() -> argparse.Action:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    rsub = next(
        a for a in sub.choices["responses"]._actions if isinstance(a, argparse._SubParsersAction)
    )
    return next(a for a in rsub.choices["import"]._actions if a.dest == "format")


def test_the_command_offers_exactly_the_registered_formats() -> None:
    action = _format_action()
    assert tuple(action.choices or ()) == tuple(READERS)
    assert action.default in READERS
    for reader in READERS.values():
        assert reader.description in str(action.help)


def test_a_flag_of_another_format_is_refused_by_name() -> None:
    for reader in READERS.values():
        for flag, options in (
            ("--metric", LogOptions(metric="acc")),
            ("--filter", LogOptions(filter_name="strict-match")),
            ("--item-field", LogOptions(item_field="id")),
            ("--scorer", LogOptions(scorer="match")),
        ):
            if flag in reader.options:
                reader.check(options)  # its own flag passes
            else:
                with pytest.raises(InputError, match=f"{flag} does not apply to --format"):
                    reader.check(options)
        reader.check(LogOptions(model="m", threshold=0.5))  # every format takes these


def test_an_unknown_format_names_the_known_ones() -> None:
    with pytest.raises(InputError, match="unknown import format 'csv'; use one of lm-eval"):
        log_reader("csv")


def test_the_registry_reads_cells_like_the_format_module() -> None:
    from curation.responses._lm_eval import read_lm_eval

    path = FIXTURES / "2024" / "meta-llama__Llama-3.1-8B-Instruct"
    glob = str(path / "samples_arc_easy_*.jsonl")
    cells, summary = read_cells("lm-eval", glob, LogOptions())
    direct = read_lm_eval(glob)
    assert cells.equals(direct.cells) and summary == direct.summary()
    assert cells.height > 0
