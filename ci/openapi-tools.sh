#!/usr/bin/env bash
# schemas/openapi.yaml in the tools people take it to, pinned in
# ci/package-lock.json (npm) and go.mod (go tool oapi-codegen):
#
#   Spectral      spectral:oas reports no error (ci/spectral.yaml), on this
#                 document and on the simulator's control API document
#                 (simulator/controlapi.yaml)
#   Redocly       recommended-strict: no problem but the licence warning, on
#                 both documents (ci/lint-openapi.sh, ci/redocly.yaml; no
#                 ignore file)
#   ajv           the validator inside Prism, loaded with the document,
#                 accepts every valid fixture of the corpus and rejects every
#                 invalid one (ci/corpus-with-ajv.js)
#   Prism         prism proxy --errors in front of the simulator: clean on the
#                 faultless one, flags every named fault that breaks a schema
#                 rule, and judges each body as package schemas does
#                 (ci/prismcheck); it also captures the feed pages and
#                 tracked-videos answers the next two steps read
#   openapi-typescript + tsc --strict
#                 a small client (ci/typescript/check.ts) compiles against the
#                 generated types and reads every captured document
#   oapi-codegen  generated Go types decode and re-encode every captured
#                 document and event with no member lost (ci/gocodegen)
#
# Needs Go, Node.js >= 20.19 and npm; installs the Node tools into
# ci/node_modules (ci/npm-install.sh). Every step runs even when an earlier
# one failed (the last two need the Prism step's captures); the script then
# exits 1 and names the failed steps. ci/check.sh (and so .ci/run) calls it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
start=$SECONDS

"$root/ci/npm-install.sh"
# No usage data sent and no update check: CI reaches only package registries.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
bin=ci/node_modules/.bin
doc=schemas/openapi.yaml

tmp="$(mktemp -d)"
captured="$tmp/captured"
# The generated clients live beside the code that uses them while it runs
# (git ignores both places), and go away after.
cleanup() { rm -rf "$tmp" ci/typescript/generated ci/gocodegen/tcmapi; }
trap cleanup EXIT
cleanup
mkdir -p "$tmp"

failed=()
step() {
	local name="$1"
	shift
	printf '\n--> %s\n' "$name"
	local t=$SECONDS
	if "$@"; then
		echo "--> ok: $name ($((SECONDS - t)) s)"
	else
		echo "--> FAILED: $name ($((SECONDS - t)) s)"
		failed+=("$name")
	fi
}

# The README's line (spectral lint --ruleset ci/spectral.yaml
# schemas/openapi.yaml; errors fail, as by default), and the control API's
# document beside it.
spectral() {
	echo "Spectral CLI $("$bin/spectral" --version)"
	"$bin/spectral" lint --ruleset ci/spectral.yaml --fail-severity error "$doc" simulator/controlapi.yaml
}

redocly() {
	echo "Redocly CLI $("$bin/redocly" --version 2>/dev/null | head -1)"
	ci/lint-openapi.sh
}

prism() {
	go run ./ci/prismcheck --prism "$bin/prism" --doc "$doc" --capture "$captured"
}

typescript() {
	echo "openapi-typescript $("$bin/openapi-typescript" --version | tr -d v), TypeScript $("$bin/tsc" --version | awk '{print $2}')"
	"$bin/openapi-typescript" "$doc" -o ci/typescript/generated/tcm-api.d.ts --silent
	"$bin/tsc" -p ci/typescript
	node ci/typescript/generated/out/check.js "$captured"
}

gocodegen() {
	echo "oapi-codegen $(go tool oapi-codegen -version | tail -1)"
	go tool oapi-codegen -config ci/gocodegen/oapi-codegen.yaml "$doc"
	(cd ci/gocodegen && go run . "$captured")
}

needs_captures() {
	if [[ ! -d "$captured" ]]; then
		echo "no captured documents: the Prism step wrote none"
		return 1
	fi
	"$@"
}

step "Spectral (spectral:oas)" spectral
step "Redocly (recommended-strict)" redocly
step "ajv (Prism's validator) on the fixture corpus" node ci/corpus-with-ajv.js
step "Prism proxy --errors in front of the simulator" prism
step "openapi-typescript + tsc --strict" needs_captures typescript
step "oapi-codegen round trip" needs_captures gocodegen

if ((${#failed[@]} > 0)); then
	printf '\nci/openapi-tools.sh: %d step(s) failed in %d s:\n' "${#failed[@]}" "$((SECONDS - start))"
	printf '    %s\n' "${failed[@]}"
	exit 1
fi
printf '\nci/openapi-tools.sh: all 6 steps ok in %d s\n' "$((SECONDS - start))"
