#!/usr/bin/env bash
# The suite against conforming servers drawn at random: each draw N is a
# simulator process started with --conforming-draw N on the manual clock
# (package simulator/variant: every point the contract leaves open drawn
# from N), judged by the suite with the seeded keys (the free key takes the
# rate-limit burst) through --control-clock. Every draw conforms, so every
# failure is a false failure of the suite. Prints one line per draw (and the
# draw and the failed specs when it fails); fails if any draw fails.
# Every draw whose number ends in 5 is made heavy (N:heavy: 300-character
# Unicode titles, channel events in VideoEntries, hourly samples, extra
# members), beside the draws heavy by chance.
#
#   bash ci/draws.sh            # draws 101 to 150
#   bash ci/draws.sh 1 20       # draws 1 to 20
#
# (suites/selftest runs draw 1 in-process in go test, CI draws 2 to 4 there, the last heavy; TCM_DRAWS=1-50 more.)
source "$(dirname "${BASH_SOURCE[0]}")/simulators.sh"
first="${1:-101}" count="${2:-50}" jobs="${DRAWS_JOBS:-2}"
go build -o "$work/simulator" ./cmd/simulator
go test -c -o "$work/suite.test" ./suites

# judge N: one draw, its line (and what failed) in $work/drawN.out, and
# $work/drawN.failed when it failed. Two draws at once: each run is a
# process of its own, and the suite on a manual clock waits on nothing.
judge() {
	local n="$1" draw="$1" t=$SECONDS code=0 report
	[[ $n == *5 ]] && draw="$n:heavy"
	start "draw$n" --speed 0 --conforming-draw "$draw"
	# no run's memory is judged here: a larger GC target spends less CPU
	(cd "$work" && GOGC=400 timeout 300 "$work/suite.test" --target "$(field "draw$n" url)" --pro-key "$(field "draw$n" proKey)" \
		--free-key "$(field "draw$n" freeKey)" --revoked-key "$(field "draw$n" revokedKey)" --control-clock \
		--report-dir "$work/draw$n" --ginkgo.no-color >"$work/draw$n.suite.log" 2>&1) || code=$?
	report="$work/draw$n/conformance-report.json"
	printf 'draw %-9s exit %d, %2d s, %s specs passed, %s failed, %s requests, outcome %s\n' "$draw" "$code" $((SECONDS - t)) \
		"$(jq -r .totals.passed "$report" 2>/dev/null || echo '?')" "$(jq -r .totals.failed "$report" 2>/dev/null || echo '?')" \
		"$(jq -r .totals.requests "$report" 2>/dev/null || echo '?')" "$(jq -r .outcome "$report" 2>/dev/null || echo '?')"
	if [[ $code -ne 0 ]]; then
		touch "$work/draw$n.failed"
		sed -n '/conforming draw/,/framing:/p' "$work/draw$n.log"
		grep -E "\[FAIL\]|\[FAILED\]" "$work/draw$n.suite.log" | head -20
	fi
	kill "${pids[-1]}" 2>/dev/null || true
}

failed=0 t0=$SECONDS
last=$((first + count - 1))
for n in $(seq "$first" "$last"); do
	judge "$n" >"$work/draw$n.out" 2>&1 &
	pids+=("$!")
	if (($(jobs -rp | wc -l) >= jobs)); then
		wait -n || true
	fi
done
wait || true
for n in $(seq "$first" "$last"); do
	cat "$work/draw$n.out"
	if [[ -e "$work/draw$n.failed" || ! -s "$work/draw$n.out" ]]; then
		failed=1
	fi
done
echo "$count draws in $((SECONDS - t0)) s, $jobs at a time: $([[ $failed -eq 0 ]] && echo 'all passed' || echo 'FALSE FAILURES of the suite above')"
exit $failed
