#!/usr/bin/env bash
# The kill figures of the fuzzing (issue 21): each client with one planted
# bug (simulator/clienttest/internal/planted) must be found by go test -fuzz
# and by the seed loop. For each bug it prints how long go test -fuzz took
# to find it, from a corpus of one calm input (-parallel 1, at most
# FUZZTIME each, default 120s), and how many seeds ci/fuzz-seeds.sh tried
# until one failed (at most SEEDS, default 200). go test -fuzz writes the
# failing inputs into a copy of the tree, which is removed.
#
#   ci/fuzz-planted.sh                  # every bug
#   ci/fuzz-planted.sh tight-retry      # one
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cd "$root"
git ls-files -z | xargs -0 -I{} cp --parents {} "$copy" 2>/dev/null || cp -r . "$copy"
go test -c -o "$copy/planted.test" ./simulator/clienttest/

declare -A target=([panic-on-null]=FuzzPlantedPanicOnNull [count-twice-tie]=FuzzPlantedCountTwiceTie
	[tight-retry]=FuzzPlantedTightRetry [loop-on-cycle]=FuzzPlantedLoopOnCycle [drop-unknown]=FuzzPlantedDropUnknown)
declare -A breaking=([loop-on-cycle]=1 [drop-unknown]=1)
bugs=("$@")
[[ ${#bugs[@]} -gt 0 ]] || bugs=(panic-on-null count-twice-tie tight-retry loop-on-cycle drop-unknown)

printf "%-16s %-22s %s\n" BUG "GO TEST -FUZZ" "SEED LOOP"
for bug in "${bugs[@]}"; do
	# The time is the fuzz target's own, from its --- FAIL line (the build
	# is not counted); the inputs of earlier runs (testdata/fuzz and the
	# cache's corpus) are removed first, so that each run starts afresh.
	rm -rf "$copy/simulator/clienttest/testdata/fuzz/${target[$bug]}" "$(go env GOCACHE)/fuzz/github.com/tcmkit/tcmkit/simulator/clienttest/${target[$bug]}"
	found="not found in ${FUZZTIME:-120s}"
	if ! (cd "$copy" && go test -run XXX -fuzz "^${target[$bug]}\$" -fuzztime "${FUZZTIME:-120s}" -parallel 1 ./simulator/clienttest/ >"$copy/$bug.log" 2>&1); then
		found="$(sed -n "s/^--- FAIL: ${target[$bug]} (\(.*\))$/found in \1/p" "$copy/$bug.log" | head -1)"
		[[ -n "$found" ]] || found="failed: $(grep -m1 -E 'FAIL|panic' "$copy/$bug.log")"
	fi
	seeds="$(FUZZ_BREAK="${breaking[$bug]:-}" FUZZ_STOP=1 ci/fuzz-seeds.sh 1 "${SEEDS:-200}" -- \
		env TCM_PLANTED_BUG="$bug" "$copy/planted.test" -test.run TestPlantedClient 2>&1 | tail -1 || true)"
	case "$seeds" in
	*"failed: "*) seeds="found at seed ${seeds##*failed: }" ;;
	*) seeds="not found in ${SEEDS:-200} seeds" ;;
	esac
	printf "%-16s %-22s %s\n" "$bug" "$found" "$seeds"
done
