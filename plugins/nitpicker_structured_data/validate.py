"""Items checked against the schema.org vocabulary and the search engines' rich-result requirements.

Input is the plain tree of ``extract.Node`` (what a test can build by hand with ``node()``); output is a
list of ``Problem`` (severity, property path such as ``Product.offers.price``, message). The value checks
are loose, as search engines are: text is accepted where a Thing is expected, a number or a date must look
like one only where the property expects nothing but numbers or dates.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .extract import Node, short

DATA = Path(__file__).with_name("data")
TEXT = frozenset({"Text", "URL", "CssSelectorType", "XPathType", "PronounceableText"})
NUMBER = frozenset({"Number", "Integer", "Float"})
DATE = frozenset({"Date", "DateTime", "Time"})
BOOLEAN = frozenset({"Boolean"})
_NUMBER = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")
_DATE = re.compile(
    r"^\s*(\d{4}(-\d{2}(-\d{2})?)?([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?|\d{2}:\d{2}(:\d{2}(\.\d+)?)?)"
    r"(Z|[+-]\d{2}:?\d{2})?\s*$"
)
_BOOLEAN = {"true", "false", "https://schema.org/true", "https://schema.org/false", "http://schema.org/true"}


@dataclass(frozen=True)
class Problem:
    """A problem at ``path``; ``node`` and ``prop`` say where in the item it is (the viewer's tree shows it
    there): the node holding the property ``prop``, or where a missing one should be; ``prop`` "" for the
    node itself (a type problem)."""

    severity: str  # "error", "warning" or "info"
    path: str
    message: str
    node: Node | None = field(default=None, compare=False, repr=False)
    prop: str = field(default="", compare=False)


class Vocabulary:
    """schema.org's types, properties, enumeration members and superseded terms (data/schemaorg.json)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.source = data.get("_source", {})
        self.types: dict[str, list[str]] = data["types"]
        self.datatypes = frozenset(data["datatypes"])
        self.properties: dict[str, dict[str, list[str]]] = data["properties"]
        self.members: dict[str, list[str]] = data["members"]
        self.superseded: dict[str, str] = data["superseded"]
        self._ancestors: dict[str, frozenset[str]] = {}

    def ancestors(self, name: str) -> frozenset[str]:
        """``name`` and every type above it (an enumeration member: its enumerations and theirs)."""
        found = self._ancestors.get(name)
        if found is None:
            seen: set[str] = set()
            todo = [name, *self.members.get(name, ())]
            while todo:
                current = todo.pop()
                if current not in seen:
                    seen.add(current)
                    todo.extend(self.types.get(current, ()))
            found = self._ancestors[name] = frozenset(seen)
        return found

    def is_enumeration(self, name: str) -> bool:
        return "Enumeration" in self.ancestors(name) and name != "Enumeration"


@cache
def vocabulary() -> Vocabulary:
    return Vocabulary(json.loads((DATA / "schemaorg.json").read_text(encoding="utf-8")))


@cache
def rich_results() -> dict[str, Any]:
    return dict(json.loads((DATA / "rich_results.json").read_text(encoding="utf-8")))


def node(types: str | list[str], **props: Any) -> Node:
    """A Node from keyword arguments (for tests and callers without HTML): lists stay lists, dicts nest."""

    def value(v: Any) -> list[Any]:
        items = v if isinstance(v, list) else [v]
        return [i for i in items]

    return Node([types] if isinstance(types, str) else list(types), {k: value(v) for k, v in props.items()})


def _is_schema(term: str) -> bool:
    return not (term.startswith("?") or "/" in term or ":" in term)


def _literal_problem(value: Any, ranges: list[str], vocab: Vocabulary) -> str | None:
    """What is wrong with a literal where ``ranges`` are expected, or None."""
    allowed = set(ranges)
    if allowed & TEXT or not allowed:
        return None
    text = str(value).strip()
    if isinstance(value, bool):
        return None if allowed & BOOLEAN or not allowed & (NUMBER | DATE) else "a boolean"
    if isinstance(value, (int, float)):
        return None if allowed & NUMBER or not allowed & (DATE | BOOLEAN) else "a number"
    datatypes = allowed & vocab.datatypes
    if datatypes:
        if allowed & NUMBER and _NUMBER.match(text):
            return None
        if allowed & DATE and _DATE.match(text):
            return None
        if allowed & BOOLEAN and text.lower() in _BOOLEAN:
            return None
        things = allowed - vocab.datatypes
        if not things:
            return f"{text[:60]!r}"
    enumerations = [r for r in allowed if vocab.is_enumeration(r)]
    if enumerations and len(enumerations) == len(allowed - vocab.datatypes):
        member = short(text)
        if not any(r in vocab.ancestors(member) for r in enumerations):
            return f"{text[:60]!r}"
    return None


def validate(root: Node, vocab: Vocabulary | None = None, path: str = "") -> list[Problem]:
    """Every vocabulary problem of ``root`` and the items nested in it (not those it only references)."""
    vocab = vocab or vocabulary()
    problems: list[Problem] = []
    _validate(root, vocab, path or type_name(root), problems)
    return problems


def type_name(node: Node) -> str:
    return node.types[0].removeprefix("?") if node.types else "(no type)"


def _validate(item: Node, vocab: Vocabulary, path: str, problems: list[Problem]) -> None:
    schema_types = [t for t in item.types if _is_schema(t)]
    if item.types and not schema_types:
        unbound = [t[1:] for t in item.types if t.startswith("?")]
        if unbound:  # JSON-LD without an @context: its terms mean nothing, not schema.org's
            problems.append(
                Problem(
                    "error",
                    path,
                    f"{' '.join(unbound)} has no @context naming schema.org: not read as schema.org",
                    item,
                )
            )
        return  # another vocabulary: not ours to judge
    known: list[str] = []
    for t in schema_types:
        if t not in vocab.types:
            problems.append(Problem("error", path, f"{t} is not a schema.org type", item))
        else:
            known.append(t)
            if t in vocab.superseded:
                problems.append(
                    Problem(
                        "warning", path, f"type {t} is superseded by {vocab.superseded[t]} (deprecated)", item
                    )
                )
    ancestors: set[str] = set()
    for t in known:
        ancestors |= vocab.ancestors(t)
    for prop, values in item.props.items():
        here = f"{path}.{prop}"
        if not _is_schema(prop):
            if prop.startswith("?"):
                problems.append(
                    Problem("error", here, f"{prop[1:]}: a term with no schema.org @context", item, prop)
                )
            continue
        spec = vocab.properties.get(prop)
        if spec is None:
            problems.append(Problem("error", here, f"{prop} is not a schema.org property", item, prop))
            continue
        if prop in vocab.superseded:
            problems.append(
                Problem(
                    "warning",
                    here,
                    f"property {prop} is superseded by {vocab.superseded[prop]} (deprecated)",
                    item,
                    prop,
                )
            )
        if known and spec["domain"] and not ancestors & set(spec["domain"]):
            problems.append(
                Problem("error", here, f"{prop} is not a property of {' or '.join(known)}", item, prop)
            )
        ranges = spec["range"]
        for value in values:
            if isinstance(value, Node):
                _check_nested(value, item, prop, ranges, vocab, here, problems)
            else:
                wrong = _literal_problem(value, ranges, vocab)
                if wrong:
                    problems.append(
                        Problem(
                            "error",
                            here,
                            f"{prop} expects {' or '.join(sorted(ranges))}, got {wrong}",
                            item,
                            prop,
                        )
                    )


def _check_nested(
    value: Node,
    parent: Node,
    prop: str,
    ranges: list[str],
    vocab: Vocabulary,
    here: str,
    problems: list[Problem],
) -> None:
    types = [t for t in value.types if _is_schema(t) and t in vocab.types]
    if types and ranges:
        fits = set(ranges) | {"Role"}
        if not any(vocab.ancestors(t) & fits for t in types):
            problems.append(
                Problem(
                    "error",
                    here,
                    f"{prop} expects {' or '.join(sorted(ranges))}, got a {' '.join(types)}",
                    parent,
                    prop,
                )
            )
    if not value.ref:  # a referenced node is validated where it is defined
        _validate(value, vocab, here, problems)
    if value.cut:
        problems.append(
            Problem("warning", here, "nested too deep: the levels below were not read", parent, prop)
        )


# --- rich results ----------------------------------------------------------------------------------------


def feature_of(item: Node, vocab: Vocabulary | None = None) -> str | None:
    """The rich-result feature ``item`` is a candidate for (the first in the data file whose types fit)."""
    vocab = vocab or vocabulary()
    ancestors: set[str] = set()
    for t in item.types:
        ancestors |= vocab.ancestors(t)
    for name, feature in rich_results()["features"].items():
        if ancestors & set(feature["types"]):
            return str(name)
    return None


def _present(item: Node, dotted: str) -> bool:
    head, _, rest = dotted.partition(".")
    values = [v for v in item.props.get(head, []) if v not in ("", None)]
    if not rest:
        return bool(values)
    return any(not isinstance(v, Node) or _present(v, rest) for v in values)


def _where_missing(item: Node, dotted: str) -> tuple[Node, str]:
    """The node where the missing ``dotted`` property should be, and its name there: ``nutrition.calories``
    of a Recipe with a nutrition item is ``calories`` of that item."""
    head, _, rest = dotted.partition(".")
    while rest:
        nested = next((v for v in item.props.get(head, []) if isinstance(v, Node)), None)
        if nested is None:
            break
        item, (head, _, rest) = nested, rest.partition(".")
    return item, f"{head}.{rest}" if rest else head


def requirements(
    item: Node, profile: dict[str, Any], path: str, feature: str, depth: int = 0
) -> list[Problem]:
    """Required properties missing (errors) and recommended ones missing (warnings) of ``item`` under
    ``profile``, then the same for its nested items the profile names."""
    problems: list[Problem] = []
    for level, severity in (("required", "error"), ("recommended", "warning")):
        for need in profile.get(level, []):
            options = need if isinstance(need, list) else [need]
            if not any(_present(item, o) for o in options):
                which = "" if len(options) == 1 else f" (one of {', '.join(options)})"
                where, prop = _where_missing(item, options[0])
                problems.append(
                    Problem(
                        severity,
                        f"{path}.{options[0]}",
                        f"missing{which}: {level} for the {feature} rich result",
                        where,
                        prop,
                    )
                )
    if depth >= 8:
        return problems
    for prop, nested in profile.get("nested", {}).items():
        sub = rich_results()["nested"][nested]
        for value in item.props.get(prop, []):
            if isinstance(value, Node):
                problems.extend(requirements(value, sub, f"{path}.{prop}", feature, depth + 1))
    return problems


def rich_result(
    item: Node, path: str = "", vocab: Vocabulary | None = None
) -> tuple[str | None, list[Problem]]:
    """(the feature ``item`` is a candidate for, or None; its requirement problems)."""
    name = feature_of(item, vocab)
    if name is None:
        return None, []
    feature = rich_results()["features"][name]
    return feature["label"], requirements(item, feature, path or type_name(item), feature["label"])
