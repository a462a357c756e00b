#!/usr/bin/env bash
# Validates every example of schemas/openapi.yaml twice (ci/checkexamples):
# against its schema as the document states it, and with the kit's own
# validator (package schemas) where the schema is generated from a schema
# file, format assertions on in both. Redocly's no-invalid-media-type-examples
# rule (ci/lint-openapi.sh) checks them with its own validator too. It also
# checks that the version, paths and limit rules the document restates agree
# with schemas/contract.go. Needs Go only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
go run ./ci/checkexamples schemas/openapi.yaml
