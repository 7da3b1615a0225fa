#!/usr/bin/env python3
"""Checks an OpenAPI description against the OpenAPI 3.0 JSON schema, offline: the schema from
Debian's openapi-specification package, the check with python3-jsonschema.

    openapi_schema.py docs/openapi.yaml
"""
import json
import sys

import jsonschema
import yaml

SCHEMA = "/usr/share/openapi-specification/schemas/v3.0/schema.json"


def main():
    with open(SCHEMA) as f:
        schema = json.load(f)
    with open(sys.argv[1]) as f:
        doc = yaml.safe_load(f)
    if not doc.get("openapi", "").startswith("3.0."):
        print(f"{sys.argv[1]}: not OpenAPI 3.0.x")
        return 1
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    for e in errors:
        print(f"{sys.argv[1]}: at {'/'.join(map(str, e.path))}: {e.message[:400]}")
    # the schema does not check these: ids unique, every operation tagged
    ids = []
    for path, item in doc["paths"].items():
        for method in ("get", "put", "post", "delete"):
            op = item.get(method)
            if op is None:
                continue
            ids.append(op.get("operationId"))
            if not op.get("tags"):
                errors.append(f"{method} {path} has no tags")
                print(f"{sys.argv[1]}: {method} {path} has no tags")
    if None in ids or len(ids) != len(set(ids)):
        errors.append("operationIds missing or not unique")
        print(f"{sys.argv[1]}: operationIds missing or not unique")
    print(f"{sys.argv[1]}: {len(ids)} operations, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
