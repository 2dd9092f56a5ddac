"""Markdown and HTML rendering shared by the reports."""

from __future__ import annotations

import pytest

from curation.report import html, markdown
from curation.report.blocks import Block, Bullets, Heading, Images, Paragraph, Table
from curation.report.text import table as text_table

BLOCKS: list[Block] = [
    Heading(1, "Title <x>"),
    Paragraph("Some **bold** text."),
    Bullets(("one", "two")),
    Table(("a|b", "c"), (("1", "line\nbreak"),)),
    Images((("plots/a b.png", "alt & text"),)),
]


def test_table_styles() -> None:
    assert markdown.table(["name", "n"], [["a", "1"]]) == [
        "| name | n |",
        "| --- | ---: |",
        "| a | 1 |",
    ]
    assert markdown.table(["x", "y"], [], align="lr", compact=True) == ["| x | y |", "|---|---:|"]
    assert markdown.table(["", "y"], [], compact=True, pad_empty=False)[0] == "| | y |"
    assert markdown.table(["", "y"], [])[0] == "|  | y |"
    assert markdown.table(["a|b"], [["c\nd"]], align="l", escape=True)[2] == "| c d |"
    with pytest.raises(ValueError, match="align"):
        markdown.table(["a", "b"], [], align="l")


def test_line_helpers() -> None:
    assert markdown.heading(3, "x") == "### x"
    assert markdown.bullets(["a", "b"], marker="*") == ["* a", "* b"]
    assert markdown.image("p.png", "alt") == "![alt](p.png)"
    assert markdown.cell("a|b\nc") == "a\\|b c"


def test_document() -> None:
    md = markdown.document(BLOCKS)
    assert md.startswith("# Title <x>\n\nSome **bold** text.\n\n- one\n- two\n\n")
    assert "| a\\|b | c |\n|---|---|\n| 1 | line break |" in md
    assert md.endswith("![alt & text](plots/a b.png)\n")


def test_html_page_is_escaped_and_self_contained() -> None:
    page = html.page(BLOCKS, "T & <t>")
    assert page.startswith("<!DOCTYPE html>") and "<title>T &amp; &lt;t&gt;</title>" in page
    assert "<h1>Title &lt;x&gt;</h1>" in page and "<strong>bold</strong>" in page
    assert "<li>one</li><li>two</li>" in page
    assert '<img src="plots/a b.png" alt="alt &amp; text">' in page
    assert "<script" not in page and "http" not in page


def test_text_table() -> None:
    assert text_table(("name", "n"), [("alpha", "1"), ("b", "100")]) == (
        "name     n\n-----  ---\nalpha    1\nb      100"
    )
    assert text_table(("a", "b"), [("xx", "1")], align="ll") == "a   b\n--  -\nxx  1"
