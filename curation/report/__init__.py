"""Rendering shared by every report benchcurate writes or prints.

* :mod:`curation.report.format` — numbers as text: fixed decimals, percentages, signed
  values, intervals, counts, and what a missing or non-finite value prints as.
* :mod:`curation.report.markdown` — Markdown tables, headings, lists and images, and a
  list of blocks rendered as one Markdown page.
* :mod:`curation.report.html` — the same blocks as one self-contained HTML page.
* :mod:`curation.report.blocks` — those format-neutral blocks, so the Markdown and HTML
  of one report come from one list and never disagree.
* :mod:`curation.report.text` — aligned plain-text tables for the terminal.

The modules that decide *what* a report says (``curation/irt/mirt/_markdown.py``,
``curation/measure/_report.py``, ``curation/responses/_report.py``,
``curation/publish/_card.py``, ``curation/summary.py``) use these for *how* it is
written, so a number is formatted one way everywhere. Nothing here imports the rest
of ``curation``.
"""
