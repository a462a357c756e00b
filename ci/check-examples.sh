#!/usr/bin/env bash
# Validates every example of schemas/openapi.yaml against its schema with the
# kit's own validator (package schemas, format assertions on): Redocly
# bundles the YAML into one JSON file and ci/checkexamples checks it.
# Redocly's own no-invalid-media-type-examples rule (ci/lint-openapi.sh)
# checks most examples too, but cannot follow the schema files' relative
# $refs behind their $id; this check covers all of them. It also checks that
# the version, paths and limit rules the YAML restates agree with
# schemas/contract.go.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/ci/npm-install.sh"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
cd "$root"
if ! ci/node_modules/.bin/redocly bundle --config ci/redocly.yaml schemas/openapi.yaml \
	--ext json --output "$tmp/openapi.json" >"$tmp/bundle.log" 2>&1; then
	cat "$tmp/bundle.log" >&2
	echo "ci/check-examples.sh: redocly bundle failed" >&2
	exit 1
fi
go run ./ci/checkexamples "$tmp/openapi.json"
