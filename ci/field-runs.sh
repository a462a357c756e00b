#!/usr/bin/env bash
# The suite in field conditions, in real time, against the simulator started
# as its own process with its seeded keys (a Pro and a free account that
# track overlapping channels, and a revoked key):
#   1. a run, and a second run started at once (the keys' windows still hold
#      the first run's requests);
#   2. a run while another client spends the free key's budget (the burst key);
#   3. two runs in a row against a live world (--speed 600: ten virtual
#      minutes a real second, so dozens of polls record new events while the
#      suite reads);
#   4. -p against --target is refused at once;
#   5. no piece of a key in anything the suite wrote (console, reports).
# Each must pass (4: must fail fast with its message). Prints wall time and
# requests of each run. 1 to 3 run side by side (about two minutes in all). Everything listens on 127.0.0.1 and stops by itself.
source "$(dirname "${BASH_SOURCE[0]}")/simulators.sh"
go build -o "$work/simulator" ./cmd/simulator
go test -c -o "$work/suite.test" ./suites

# judge SIM RUN [EXTRA...]: runs the suite against simulator SIM; prints the
# outcome, wall time and requests; fails when the run does not pass.
judge() {
	local sim="$1" run="$2"
	shift 2
	local t0=$SECONDS code=0
	(cd "$work" && timeout 600 "$work/suite.test" --target "$(field "$sim" url)" --pro-key "$(field "$sim" proKey)" \
		--free-key "$(field "$sim" freeKey)" --revoked-key "$(field "$sim" revokedKey)" \
		--report-dir "$work/$run" --ginkgo.no-color "$@" >"$work/$run.log" 2>&1) || code=$?
	local report="$work/$run/conformance-report.json"
	printf '%-28s exit %d, %3d s, %s requests by the specs, outcome %s\n' "$run" "$code" $((SECONDS - t0)) \
		"$(jq -r .totals.requests "$report" 2>/dev/null || echo '?')" "$(jq -r .outcome "$report" 2>/dev/null || echo '?')"
	if [[ $code -ne 0 ]]; then
		grep -E "FAIL|\[FAILED\]" "$work/$run.log" | head -20
		return 1
	fi
}

failed=0
# every file the suite wrote: its console output and its reports
runs=(first-run second-run-at-once while-another-client-spends live-world live-world-again-at-once)
outputs=()
for run in "${runs[@]}"; do outputs+=("$work/$run.log" "$work/$run"); done

# The three sections are independent (each has its own simulator process and
# keys), so they wait on their 20-a-minute windows at the same time; each
# prints into its own file, shown in order when all are done.
start twice --speed 1
start shared --speed 1
start live --speed 600
(
	key="$(field shared freeKey)" url="$(field shared url)"
	for _ in $(seq 40); do
		curl -s -o /dev/null -H "Authorization: Bearer $key" "$url/api/public-feed?limit=1" || true
		sleep 7
	done
) &
pids+=("$!")

section1() {
	echo "== 1. a run, and a second run started at once (real time, 20 requests a minute)"
	local code=0
	judge twice first-run || code=1
	judge twice second-run-at-once || code=1
	return $code
}
section2() {
	echo "== 2. a run while another client spends the free key's budget"
	judge shared while-another-client-spends
}
section3() {
	echo "== 3. a live world: --speed 600, new events recorded while the suite reads"
	local code=0 before after
	before="$(curl -s "$(field live url)/_control/clock" | jq .now)"
	judge live live-world || code=1
	judge live live-world-again-at-once || code=1
	after="$(curl -s "$(field live url)/_control/clock" | jq .now)"
	echo "   the world moved $(((after - before) / 60000)) virtual minutes during the runs (polls every 15)"
	return $code
}
t0=$SECONDS
section_pids=()
for n in 1 2 3; do
	"section$n" >"$work/section$n.out" 2>&1 &
	section_pids+=("$!")
done
for n in 1 2 3; do
	wait "${section_pids[n - 1]}" || failed=1
	cat "$work/section$n.out"
done
echo "   sections 1 to 3 side by side: $((SECONDS - t0)) s wall"

echo "== 4. -p against --target is refused at once"
t0=$SECONDS
outputs+=("$work/parallel.log" "$work/parallel")
if timeout 120 go tool ginkgo -p --procs 2 ./suites -- --target "$(field twice url)" \
	--pro-key "$(field twice proKey)" --report-dir "$work/parallel" >"$work/parallel.log" 2>&1; then
	echo "-p against --target ran"; failed=1
elif grep -q "is for the bundled simulator only" "$work/parallel.log"; then
	echo "refused in $((SECONDS - t0)) s: $(grep -o '\-p ([0-9]* processes) is for the bundled simulator only[^;]*' "$work/parallel.log" | head -1)"
else
	echo "-p failed without saying why:"; tail -20 "$work/parallel.log"; failed=1
fi
echo "== 5. no piece of a key in anything the suite wrote"
# Every run of 8 characters of a key's random part (as the redactor hides
# them); grep names the files only, never what it found.
for info in "$work"/*.json; do
	for f in proKey freeKey revokedKey; do
		r="$(jq -r ".$f // empty" "$info")"
		r="${r#*_}"
		for ((i = 0; i + 8 <= ${#r}; i++)); do echo "${r:i:8}"; done
	done
done | sort -u >"$work/pieces"
if [[ ! -s "$work/pieces" ]]; then
	echo "no keys read from the simulators' info files"; failed=1
elif grep -rlF -f "$work/pieces" "${outputs[@]}" 2>/dev/null; then
	echo "the files above hold a piece of a key"; failed=1
else
	echo "none in $(find "${outputs[@]}" -type f 2>/dev/null | wc -l) files, $(wc -l <"$work/pieces") pieces of $(ls "$work"/*.json | wc -l) simulators' keys searched"
fi
exit $failed
