#!/usr/bin/env bash
# Lints schemas/openapi.yaml, and the simulator's control API document
# simulator/controlapi.yaml, with Redocly CLI (pinned in ci/package-lock.json)
# against Redocly's recommended ruleset, warnings counted as errors
# (ci/redocly.yaml). Extra arguments go to `redocly lint`, for example
# --format=stylish.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/ci/npm-install.sh"

# No usage data sent and no update check: CI reaches only package registries.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
cd "$root"
exec ci/node_modules/.bin/redocly lint --config ci/redocly.yaml "$@" schemas/openapi.yaml simulator/controlapi.yaml
