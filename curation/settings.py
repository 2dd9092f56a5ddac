"""Reading a params.yaml section, with errors by key path (file: section.key: why).

:class:`Section` + :func:`parse_section` — the way to declare a section: a frozen
pydantic model (fields, types, bounds, defaults, a docstring per field). A misspelt key,
a string where a number belongs or a value out of range is reported once, as
``params.yaml: annotate.seed: ...``, before any work starts; :func:`key_error` lets a
check across fields name the key it is about.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, WithJsonSchema
from pydantic_core import InitErrorDetails, PydanticCustomError

from curation.errors import ConfigError

S = TypeVar("S", bound="Section")

Unit = Annotated[float, Field(ge=0, le=1)]
"""A number in [0, 1] (a share, a z, a rate)."""
PathSetting = Annotated[Path, Strict(False)]
"""A file or folder path: YAML gives text, the code gets a :class:`~pathlib.Path`."""
BackendName = Literal["simulate", "openai"]
"""simulate: the seeded offline simulation; openai: OpenAI-compatible endpoints."""
TargetSpec = str | dict[str, Any]
"""A measure target: "uniform", "beta(a, b)", or a mapping with ``kind`` (curation.measure)."""
FilePath = Annotated[Path, Field(strict=False), WithJsonSchema({"type": "string"})]
"""A file or folder named in params.yaml: YAML gives text, the code gets a ``Path``
(the schema still says string: a path is written as text)."""


TRANSPORT_MARK: Final = "x-transport"
"""The JSON Schema keyword that marks a transport setting (:data:`Transport`)."""

Transport: Any = Field(json_schema_extra={TRANSPORT_MARK: True})
"""Marks a *transport* setting: ``timeout_s: Annotated[PositiveFloat, Transport] = 120.0``.

A transport setting says how calls are made (timeouts, retries and their backoff,
concurrency, worker processes, a progress display), never what they answer: it cannot
change any output. Everything else is output-changing, including seeds, models,
sampling settings, prompts, backends, the endpoint a model is asked at and the answer
cache. DVC stages do not depend on transport keys: dvc.yaml lists a section that has
one key by key, every other key (``scripts/stage_deps.py`` writes and checks the lists),
and BenchFill's resume fingerprint leaves them out. The mark is in the JSON Schema too
(``"x-transport": true``). When in doubt a setting is not transport: a missed rerun
serves stale outputs, an extra one only costs time."""


def transport_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields of ``model`` marked :data:`Transport`, in declaration order."""
    return tuple(
        name
        for name, field in model.model_fields.items()
        if isinstance(field.json_schema_extra, dict)
        and field.json_schema_extra.get(TRANSPORT_MARK) is True
    )


def default_targets() -> list[TargetSpec]:
    """The default target list of ``gaps`` and ``subsets``: the uniform measure alone."""
    return ["uniform"]


class Section(BaseModel):
    """Base of every params section: unknown keys are errors, values are immutable.

    ``strict``: YAML already gives numbers, booleans and lists their types, so a quoted
    ``"0.5"`` or ``"1e30"`` (PyYAML reads 1e30 without a dot as text) is a mistake to
    report, not a value to coerce.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        allow_inf_nan=False,
        strict=True,
        use_attribute_docstrings=True,  # the field docstrings become schema descriptions
    )


_UNION_TAG = re.compile(
    r"^(str|int|float|bool|none|(list|dict|tuple|set|literal|nullable|function-\w+)\[.*|"
    r"constrained-\w+|function-\w+)$"
)
"""How pydantic names a union member in an error location (not a key of the file)."""


def _field_model(annotation: Any) -> type[BaseModel] | None:
    """The section class inside ``annotation`` (X, X | None, dict[str, X], list[X])."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _field_model(arg)
        if found is not None:
            return found
    return None


def _model_at(cls: type[BaseModel], parts: Sequence[Any]) -> type[BaseModel] | None:
    """The section class that holds the key at ``parts`` (None when not a section)."""
    current: type[BaseModel] | None = cls
    for part in parts:
        if current is None:
            return None
        field = current.model_fields.get(str(part))
        if field is None:  # a dict key or list index: stay on the value's model
            continue
        current = _field_model(field.annotation)
    return current


def _unknown_key(key: str, valid: Collection[str]) -> str:
    close = difflib.get_close_matches(key, list(valid), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown setting; {hint}valid: {', '.join(sorted(valid))}"


def _dotted(parts: Sequence[Any]) -> str:
    """``("panel", "models", 0, "name")`` as ``panel.models[0].name``; a bad mapping key
    (pydantic adds ``[key]`` after it) is named by the key alone."""
    out = ""
    for part in parts:
        if part == "[key]":  # pydantic's marker for "the key itself" (a benchmark's name)
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _below(path: str, text: str) -> tuple[str, str]:
    """A validator that checks keys below its own field (or across sections) words its
    message ``.key: why`` or ``[i].key: why``: that key joins the path, so the message
    names the key itself (``panel.models[1].name``, not ``panel.models: [1].name``)."""
    if text[:1] in ".[" and ": " in text:
        head, _, why = text.partition(": ")
        return (f"{path}{head}" if path else head.removeprefix(".")), why
    return path, text


def _explain(errors: Sequence[Mapping[str, Any]], cls: type[Section]) -> tuple[str, str]:
    """(key path, message) of the first problem; union members' messages are joined."""
    first = errors[0]
    loc = list(first["loc"])
    tag_at = next(
        (i for i, p in enumerate(loc) if isinstance(p, str) and _UNION_TAG.match(p)), None
    )
    if first["type"] == "extra_forbidden":
        holder = _model_at(cls, loc[:-1])
        valid = list(holder.model_fields) if holder is not None else []
        return _dotted(loc), _unknown_key(str(loc[-1]), valid)
    if tag_at is None:
        got = first.get("input")
        text = "required setting missing" if first["type"] == "missing" else str(first["msg"])
        text = text.removeprefix("Value error, ")
        if first["type"] != "missing" and not isinstance(got, Mapping | list):
            text = f"{text} (got {got!r})"
        return _below(_dotted(loc), text)
    path = loc[:tag_at]
    same = [e for e in errors if list(e["loc"])[:tag_at] == path]
    options: list[str] = []
    for e in same:
        rest = [p for p in list(e["loc"])[tag_at + 1 :] if not _UNION_TAG.match(str(p))]
        msg = str(e["msg"]).removeprefix("Input should be ").removeprefix("Value error, ")
        text = f"{_dotted(rest)}: {msg}" if rest else msg
        if text not in options:
            options.append(text)
    got = same[0].get("input") if tag_at == len(loc) - 1 else None
    shown = f" (got {got!r})" if got is not None and not isinstance(got, Mapping | list) else ""
    return _dotted(path), f"Input should be {' or '.join(options)}{shown}"


def parse_section(cls: type[S], raw: Any, *, where: str) -> S:
    """``raw`` (a params mapping, or None for "all defaults") as a ``cls`` instance.

    ``where`` names the section for messages, e.g. ``"params.yaml: annotate"`` (keys are
    joined with "."), or a file alone, ``"params.yaml"`` (keys follow ": ").
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping, got {type(raw).__name__}")
    try:
        return cls.model_validate(dict(raw))
    except ValidationError as exc:
        # a misspelt key also makes its right spelling "missing": report the typo first
        errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        path, message = _explain(errors, cls)
        sep = "." if ": " in where else ": "
        raise ConfigError(
            f"{where}{sep}{path}: {message}" if path else f"{where}: {message}"
        ) from None


def key_error(model: type[BaseModel], key: str, message: str, value: Any) -> ValidationError:
    """A validation error at ``key`` of ``model``, for a model validator's check across
    fields: reported as ``<section>.<key>: <message>``, like the key's own errors."""
    details = InitErrorDetails(
        type=PydanticCustomError("value_error", "{message}", {"message": message}),
        loc=(key,),
        input=value,
    )
    return ValidationError.from_exception_data(model.__name__, [details])
