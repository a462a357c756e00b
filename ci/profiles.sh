#!/usr/bin/env bash
# The two profiles of the suite against the simulator started as its own
# process (20 feed requests a minute per key): on its manual clock (the
# suite moves it; the run's windows cost no real time), and, with
# REALTIME=quick or REALTIME=thorough, in real time as well. Prints, for
# each run, its outcome, wall time and requests, and what quick left
# untried and what thorough would cost (the suite's "probes:" line).
# On the manual clock it prints too what the run moved the clock by, and
# how much of that waited for rate windows (the suite's "virtual time"
# line): what the run would wait in real time.
# Everything listens on 127.0.0.1 and stops by itself.
#   ci/profiles.sh                   # quick and thorough on the manual clock (seconds)
#   REALTIME=quick ci/profiles.sh    # and quick in real time (about 2 minutes)
source "$(dirname "${BASH_SOURCE[0]}")/simulators.sh"
go build -o "$work/simulator" ./cmd/simulator
go test -c -o "$work/suite.test" ./suites

# run SIM NAME ARGS...: the suite against simulator SIM.
run() {
	local sim="$1" name="$2"
	shift 2
	local t0 code=0 c0
	c0=$(curl -s "$(field "$sim" url)/_control/clock" | jq -r .now)
	t0=$(date +%s.%N)
	(cd "$work" && timeout 2700 "$work/suite.test" --target "$(field "$sim" url)" --pro-key "$(field "$sim" proKey)" \
		--free-key "$(field "$sim" freeKey)" --revoked-key "$(field "$sim" revokedKey)" \
		--report-dir "$work/$name" --ginkgo.no-color "$@" >"$work/$name.log" 2>&1) || code=$?
	printf '%-22s exit %d, %6.1f s, %s requests by the specs, outcome %s\n' "$name" "$code" "$(echo "$(date +%s.%N) - $t0" | bc)" \
		"$(jq -r .totals.requests "$work/$name/conformance-report.json" 2>/dev/null || echo '?')" \
		"$(jq -r .outcome "$work/$name/conformance-report.json" 2>/dev/null || echo '?')"
	grep -o -A2 'probes: profile.*' "$work/$name.log" | sed 's/^/    /' || true
	if [[ "$(curl -s "$(field "$sim" url)/_control/clock" | jq -r .mode)" == manual ]]; then
		printf '    the manual clock moved %s s; %s\n' "$(($(curl -s "$(field "$sim" url)/_control/clock" | jq -r .now) / 1000 - c0 / 1000))" \
			"$(grep -o 'virtual time: .*' "$work/$name.log" || echo 'no virtual time said')"
	fi
	[[ $code -eq 0 ]] || { grep -E "\[FAIL\]" "$work/$name.log" | head -20; return 1; }
}

failed=0
for profile in quick thorough; do
	start "manual-$profile" --speed 0
	run "manual-$profile" "$profile (manual clock)" --control-clock --profile "$profile" || failed=1
done
start "manual-none" --speed 0
run manual-none "no probes (manual clock)" --control-clock --ginkgo.label-filter='!probe' || failed=1
if [[ -n "${REALTIME:-}" ]]; then
	start realtime --speed 1
	run realtime "$REALTIME (real time)" --profile "$REALTIME" --run-deadline 45m || failed=1
fi
exit $failed
