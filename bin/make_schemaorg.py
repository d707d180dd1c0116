#!/usr/bin/env python3
"""Write plugins/nitpicker_structured_data/data/schemaorg.json from schema.org's published vocabulary.

Usage: bin/make_schemaorg.py PATH/schemaorg-current-https.jsonld [--release 12.0] [--source TEXT]

The input is the file schema.org publishes with each release (https://schema.org/docs/developers.html,
"schemaorg-current-https.jsonld"); download it first (the script never fetches anything). The output keeps
what the validator needs, compactly: each type with its direct parents, each property with its domain and
range, the enumeration members with their enumeration, and the superseded (deprecated) terms with their
replacement. Run it again with a newer release to refresh the data file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "plugins/nitpicker_structured_data/data/schemaorg.json"


def _ids(value: Any) -> list[str]:
    """The schema.org term names of an ``{"@id": "schema:X"}`` value or list of them."""
    items = value if isinstance(value, list) else [value] if value is not None else []
    names = []
    for item in items:
        ident = item.get("@id", "") if isinstance(item, dict) else str(item)
        if ident.startswith("schema:"):
            names.append(ident[len("schema:") :])
    return names


def compact(graph: list[dict[str, Any]]) -> dict[str, Any]:
    """The validator's view of a schema.org ``@graph``."""
    types: dict[str, list[str]] = {}
    properties: dict[str, dict[str, list[str]]] = {}
    members: dict[str, list[str]] = {}
    superseded: dict[str, str] = {}
    datatypes: set[str] = set()
    for node in graph:
        ident = node.get("@id", "")
        if not ident.startswith("schema:"):
            continue
        name = ident[len("schema:") :]
        kinds = node.get("@type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if "rdfs:Class" in kinds:
            types[name] = sorted(_ids(node.get("rdfs:subClassOf")))
            if "schema:DataType" in kinds:
                datatypes.add(name)
        elif "rdf:Property" in kinds:
            properties[name] = {
                "domain": sorted(_ids(node.get("schema:domainIncludes"))),
                "range": sorted(_ids(node.get("schema:rangeIncludes"))),
            }
        else:  # an enumeration member: its @type is the enumeration
            enumerations = [
                k[len("schema:") :] for k in kinds if isinstance(k, str) and k.startswith("schema:")
            ]
            if enumerations:
                members[name] = sorted(enumerations)
        replaced = _ids(node.get("schema:supersededBy"))
        if replaced:
            superseded[name] = replaced[0]
    # the data types that are subclasses of one (Integer of Number, URL of Text) are data types too
    for name, parents in types.items():
        if any(p in datatypes for p in parents):
            datatypes.add(name)
    return {
        "types": dict(sorted(types.items())),
        "datatypes": sorted(datatypes),
        "properties": dict(sorted(properties.items())),
        "members": dict(sorted(members.items())),
        "superseded": dict(sorted(superseded.items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="schema.org's schemaorg-current-https.jsonld")
    parser.add_argument("--release", required=True, help="the schema.org release the file is (e.g. 29.1)")
    parser.add_argument("--source", default="", help="where the file came from (named in the data file)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    graph = json.loads(args.path.read_text(encoding="utf-8"))["@graph"]
    data = {
        "_source": {
            "vocabulary": f"schema.org release {args.release} (schemaorg-current-https.jsonld)",
            "from": args.source or args.path.name,
            "written_by": "bin/make_schemaorg.py",
        },
        **compact(graph),
    }
    args.out.write_text(json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n", encoding="utf-8")
    print(
        f"{args.out.name}: {len(data['types'])} types, {len(data['properties'])} properties, "
        f"{len(data['members'])} enumeration members, {len(data['superseded'])} superseded terms",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
