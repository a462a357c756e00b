#!/usr/bin/env bash
# The kill figures of the fuzzing (issues 21, 27): each client with one
# planted bug (simulator/clienttest/internal/planted) must be found by go
# test -fuzz and by the seed loop. For each bug it prints how long go test
# -fuzz took to find it in each of RUNS runs (default 3), each from a
# corpus of one calm input and an empty fuzz cache (-parallel 1, at most
# FUZZTIME each, default 120s), and how many seeds ci/fuzz-seeds.sh tried
# until one failed (at most SEEDS, default 200; SEEDS=0 skips the seed
# loop). Then the inputs a second of a user's fuzz target (FuzzTCMClient,
# -parallel 1, for RATETIME, default 20s; RATETIME=0 skips it). go test
# -fuzz writes the failing inputs into a copy of the tree, which is
# removed.
#
#   ci/fuzz-planted.sh                  # every bug
#   ci/fuzz-planted.sh tight-retry      # one
#   MODE=break ci/fuzz-planted.sh       # answers that break the contract served to every target
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cd "$root"
git ls-files -z | xargs -0 -I{} cp --parents {} "$copy" 2>/dev/null || cp -r . "$copy"
go test -c -o "$copy/planted.test" ./simulator/clienttest/
runs=${RUNS:-3}
fuzzbreak=""
[[ "${MODE:-}" == break ]] && fuzzbreak=1

declare -A target=([panic-on-null]=FuzzPlantedPanicOnNull [count-twice-tie]=FuzzPlantedCountTwiceTie
	[tight-retry]=FuzzPlantedTightRetry [loop-on-cycle]=FuzzPlantedLoopOnCycle [drop-unknown]=FuzzPlantedDropUnknown)
declare -A breaking=([loop-on-cycle]=1 [drop-unknown]=1)
bugs=("$@")
[[ ${#bugs[@]} -gt 0 ]] || bugs=(panic-on-null count-twice-tie tight-retry loop-on-cycle drop-unknown)
fuzzcache="$(go env GOCACHE)/fuzz/github.com/tcmkit/tcmkit/simulator/clienttest"

printf "%-16s %-44s %s\n" BUG "GO TEST -FUZZ ($runs runs)" "SEED LOOP"
for bug in "${bugs[@]}"; do
	finds=()
	for _ in $(seq "$runs"); do
		# The time is the fuzz target's own, from its --- FAIL line (the
		# build is not counted); the inputs of earlier runs (testdata/fuzz
		# and the cache's corpus) are removed first, so that each run
		# starts afresh.
		rm -rf "$copy/simulator/clienttest/testdata/fuzz/${target[$bug]}" "$fuzzcache/${target[$bug]}"
		found="no(${FUZZTIME:-120s})"
		if ! (cd "$copy" && TCM_FUZZ_BREAK="$fuzzbreak" go test -run XXX -fuzz "^${target[$bug]}\$" -fuzztime "${FUZZTIME:-120s}" -parallel 1 ./simulator/clienttest/ >"$copy/$bug.log" 2>&1); then
			found="$(sed -n "s/^--- FAIL: ${target[$bug]} (\(.*\))$/\1/p" "$copy/$bug.log" | head -1)"
			[[ -n "$found" ]] || found="failed: $(grep -m1 -E 'FAIL|panic' "$copy/$bug.log")"
		fi
		finds+=("$found")
	done
	seeds="skipped"
	if [[ "${SEEDS:-200}" -gt 0 ]]; then
		seeds="$(FUZZ_BREAK="${breaking[$bug]:-$fuzzbreak}" FUZZ_STOP=1 ci/fuzz-seeds.sh 1 "${SEEDS:-200}" -- \
			env TCM_PLANTED_BUG="$bug" "$copy/planted.test" -test.run TestPlantedClient 2>&1 | tail -1 || true)"
		case "$seeds" in
		*"failed: "*) seeds="found at seed ${seeds##*failed: }" ;;
		*) seeds="not found in ${SEEDS:-200} seeds" ;;
		esac
	fi
	printf "%-16s %-44s %s\n" "$bug" "found in ${finds[*]}" "$seeds"
done

# Inputs a second: go test -fuzz's own count of inputs run (execs), over
# the time it ran, for a user's fuzz target that finds nothing.
if [[ "${RATETIME:-20s}" != 0 ]]; then
	rm -rf "$fuzzcache/FuzzTCMClient"
	(cd "$copy" && go test -run XXX -fuzz '^FuzzTCMClient$' -fuzztime "${RATETIME:-20s}" -parallel 1 ./simulator/clienttest/ >"$copy/rate.log" 2>&1) || true
	sed -n 's/^fuzz: elapsed: \([0-9]*\)s, execs: \([0-9]*\) .*/\1 \2/p' "$copy/rate.log" | tail -1 |
		awk '$1 > 0 { printf "FuzzTCMClient: %d inputs in %d s, %.0f inputs a second\n", $2, $1, $2 / $1 }'
fi
