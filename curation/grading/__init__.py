"""Answer extraction and grading (pure: no I/O, no randomness, no model calls).

Kept outside ``curation.llm`` because imported per-sample logs and BenchFill's
judge re-grade text too; nothing here talks to a model. :func:`answers_agree` compares
two bare answers with the same graders (the judge, BenchFill's validity rule);
:func:`restore_latex` puts back the LaTeX a JSON decoder read as escapes (the judge's
replies, BenchFill's rewrites).
"""

from curation.grading._agree import answers_agree
from curation.grading._extract import (
    explicit_answer,
    extract_choice,
    extract_code,
    extract_exact,
    extract_numeric,
    last_boxed,
)
from curation.grading._grade import (
    METHODS,
    TRUNCATED,
    CodeSandbox,
    Grade,
    GradingSettings,
    grade,
    method_for,
    normalize_text,
    reference_letter,
    texts_match,
    values_match,
)
from curation.grading._latex import restore_latex
from curation.grading._numeric import numbers_equal, parse_number
from curation.grading._settings import grading_settings
from curation.grading._symbolic import symbolically_equal

__all__ = [
    "METHODS",
    "TRUNCATED",
    "CodeSandbox",
    "Grade",
    "GradingSettings",
    "answers_agree",
    "explicit_answer",
    "extract_choice",
    "extract_code",
    "extract_exact",
    "extract_numeric",
    "grade",
    "grading_settings",
    "last_boxed",
    "method_for",
    "normalize_text",
    "numbers_equal",
    "parse_number",
    "reference_letter",
    "restore_latex",
    "symbolically_equal",
    "texts_match",
    "values_match",
]
