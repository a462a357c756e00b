#!/usr/bin/env bash
# The checks of CI, runnable the same way on any clone: ci/check.sh
# (.ci/run calls it). Needs Go, Node.js/npm and git; the Node tools are
# installed into ci/node_modules on first use.
#
# Every step runs even when an earlier one failed, so that one CI run shows
# every problem; the script then exits 1 and names the failed steps. Its
# last step checks that nothing the run started still runs (a process that
# carries the run's TCM_CI_RUN in its environment, a podman container that
# carries its label), and its last line says how many steps passed, which
# failed and how long it all took.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Every process the run starts inherits it; every container the scripts
# start is labelled tcmkit.ci.run=$TCM_CI_RUN.
export TCM_CI_RUN="${TCM_CI_RUN:-ci-$$-$(date +%s)}"
# Every Go build of the run has the release's settings (ci/release.sh,
# ci/readme.sh), so that go vet, go test, the release's linux/amd64 binary,
# the README's builds and go install compile the standard library and the
# modules once between them: on an empty build cache, each setting of its
# own compiled them again.
export CGO_ENABLED=0 GOFLAGS="-trimpath $(go env GOFLAGS)"
started=$SECONDS
steps=0
failed=()
bg_logs="$(mktemp -d)"
trap 'rm -rf "$bg_logs"' EXIT

# measured NAME COMMAND...: runs COMMAND in a subshell whose bash times,
# written to $bg_logs/NAME.times, are that step's CPU alone (user and system
# of every process it waited for), whatever else ends meanwhile; the
# subshell's exit status is the command's.
measured() {
	local name="$1"
	shift
	(
		st=0
		"$@" || st=$?
		times >"$bg_logs/$name.times"
		echo "$SECONDS" >>"$bg_logs/$name.times"
		exit "$st"
	)
}
# step_cpu NAME: the CPU seconds a measured step took.
step_cpu() {
	awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); n += p[1] * 60 + p[2] } printf "%d", n }' "$bg_logs/$1.times" 2>/dev/null || echo "?"
}

# run NAME COMMAND...: prints what it does, runs it, remembers a failure.
# A shell function of this script runs in the script's shell (nothing_left
# must not see a subshell of the run as a leftover), uncounted.
run() {
	local name="$1"
	shift
	local t=$SECONDS id="fg$steps"
	steps=$((steps + 1))
	printf '\n==> %s\n' "$name"
	local st=0
	if declare -F "$1" >/dev/null; then
		"$@" || st=$?
	else
		measured "$id" "$@" || st=$?
	fi
	if ((st != 0)); then
		echo "==> FAILED: $name"
		failed+=("$name")
	fi
	echo "==> took $((SECONDS - t)) s ($(step_cpu "$id") s of CPU)"
}

# leftovers: what the run started that still runs, one line each: the
# processes whose environment holds this run's TCM_CI_RUN (but this
# script and this check), and podman's containers with its label.
leftovers() {
	local d pid self=$BASHPID
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[[ $pid == "$$" || $pid == "$self" ]] && continue
		if grep -qzxF "TCM_CI_RUN=$TCM_CI_RUN" "$d/environ" 2>/dev/null && [[ -e $d ]]; then
			printf 'process %s: %s\n' "$pid" "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null | cut -c1-160)"
		fi
	done
	if command -v podman >/dev/null; then
		podman ps -a --filter "label=tcmkit.ci.run=$TCM_CI_RUN" --format 'container {{.Names}} ({{.Image}}): {{.Status}}' 2>/dev/null || true
	fi
}
nothing_left() {
	local left
	sleep 1 # a process that is ending ends
	left="$(leftovers)"
	if [[ -n "$left" ]]; then
		echo "still running, started by this run (TCM_CI_RUN=$TCM_CI_RUN):"
		echo "$left"
		return 1
	fi
	echo "no process and no container of this run is left (TCM_CI_RUN=$TCM_CI_RUN)"
}

# gofmt_check lists every Go file (tracked or not, except installed tools
# and test data) that gofmt would change.
gofmt_check() {
	local out
	if ! out="$(find . \( -name node_modules -o -name testdata -o -name .git \) -prune \
		-o -name '*.go' -type f -print0 | xargs -0 -r gofmt -l 2>&1)"; then
		echo "$out"
		return 1
	fi
	if [[ -n "$out" ]]; then
		echo "not gofmt-ed (fix with: gofmt -w FILE):"
		echo "$out"
		return 1
	fi
	echo "every Go file is gofmt-ed"
}

# background NAME COMMAND...: starts a step whose time goes in waiting on
# real-time rate windows rather than on the CPU; its output goes to a file and
# is shown, in order, by collect.
bg_names=()
bg_pids=()
bg_starts=()
background() {
	local name="$1"
	shift
	measured "bg${#bg_names[@]}" "$@" >"$bg_logs/${#bg_names[@]}.log" 2>&1 &
	bg_pids+=("$!")
	bg_starts+=("$SECONDS")
	bg_names+=("$name")
	printf '\n==> %s: started in the background\n' "$name"
}
# await I: waits for background step I once, and keeps its exit status.
bg_status=()
await() {
	if [[ -z "${bg_status[$1]:-}" ]]; then
		local st=0
		wait "${bg_pids[$1]}" || st=$?
		bg_status[$1]=$st
	fi
	return "${bg_status[$1]}"
}
collect() {
	local i
	for i in "${!bg_names[@]}"; do
		steps=$((steps + 1))
		printf '\n==> %s\n' "${bg_names[i]}"
		local st=0
		await "$i" || st=$?
		cat "$bg_logs/$i.log"
		if ((st != 0)); then
			echo "==> FAILED: ${bg_names[i]}"
			failed+=("${bg_names[i]}")
		fi
		local ended
		ended=$(sed -n 3p "$bg_logs/bg$i.times" 2>/dev/null || echo "$SECONDS")
		echo "==> took $((ended - bg_starts[i])) s in the background, from $((bg_starts[i] - started)) s to $((ended - started)) s of the run ($(step_cpu "bg$i") s of CPU)"
	done
}

run "go version" go version
# The release's six builds (a third of the run's CPU) take what the steps
# that wait leave idle, at a lower priority; the release step reuses them.
background "the release's six binaries, built ahead of the release step (ci/release.sh --binaries)" nice -n 10 ci/release.sh --binaries v0.0.0-ci
binaries_job=$((${#bg_pids[@]} - 1))
# go vet first, alone but for the release's builds of other platforms: it
# compiles the standard library and every module the background steps
# build on, once. Two go commands that compile the same package at the same
# time each compile it; on an empty build cache, the six steps below, each
# building a simulator or a tool, each compiled it while go vet did
# (181 s for its 70 s of CPU).
run "go vet ./..." go vet ./...
# The OpenAPI tools wait on npm's registry (the first time) and run on Node
# a process at a time: beside the Go steps.
background "OpenAPI in Spectral, Redocly, Prism, openapi-typescript, oapi-codegen (ci/openapi-tools.sh)" ci/openapi-tools.sh
# The real-time runs wait on 20-a-minute windows, one simulator process of
# their own each: they overlap with the rest of the steps.
background "the suite in field conditions: re-run at once, a shared key, a live world (ci/field-runs.sh)" ci/field-runs.sh
background "record and replay in real time: tcmkit record of a simulator and of a conforming draw, served by tcmkit simulate --world, answers as the original did (ci/record.sh)" ci/record.sh
background "real clients judged by the simulator: the rude example fails each client rule once, the polite one passes in real time at 20 requests a minute; the client reports in Chromium (ci/clients.sh)" ci/clients.sh
# The browser steps wait on Chromium (and on apt-get the first time, one
# install at a time: ci/apt-install.sh takes a lock) more than they work.
background "the simulator from a web page in headless Chromium (ci/browser.sh)" ci/browser.sh
background "the simulator's page GET /_control/ui in headless Chromium (ci/ui.sh)" ci/ui.sh
run "gofmt -l" gofmt_check
run "no function over 150 lines (ci/funclen; go run ./ci/funclen -list 100 lists the long ones)" go run ./ci/funclen -max 150
run "OpenAPI examples (ci/check-examples.sh)" ci/check-examples.sh

# The README's test command, exactly. CI reads its ok/FAIL lines, so its
# output is not filtered and it comes after the quick static checks.
run "go test ./..." go test ./...
run "the suite against every hostile target, the slow ones too: bounded in memory and time (TCM_HOSTILE=all)" env TCM_HOSTILE=all go test -count=1 -run TestHostileTargets ./suites/selftest
# The draws keep a core busy, not two (a simulator and a suite process at a
# time, their start-up and jq between; in-process, runs that wait on their
# draws' worlds): beside the blame sweep and the kill matrix, they take what
# those leave idle. After the hostile targets, whose runs have bounds of
# real time.
background "the suite against 50 conforming servers drawn at random (every tenth heavy: long Unicode titles, channel events in VideoEntries, hourly samples, extra members), each a simulator process: no false failure (ci/draws.sh)" ci/draws.sh
background "the generated probes under --profile thorough against 10 conforming draws and the simulator, the whole suite against draws 2 to 4 (4 heavy), in-process: no false failure (go test ./... judges draw 1 and quick alone: TCM_DRAWS, TCM_THOROUGH_DRAWS)" env TCM_DRAWS=2-4 TCM_THOROUGH_DRAWS=101-110 go test -count=1 -run 'TestConformingDrawsPass$|TestConformingDrawsPassThorough|TestProfiles' ./suites/selftest
# The whole sweep (every named fault through every spec, about 5 min on 2
# busy cores) is TCM_BLAME=all, by hand; CI runs its stratified part.
run "every failure against a named fault of each requirement, the ten faults hardest to blame, and every fault ever misblamed, blames that fault's requirement alone, with its evidence (TCM_BLAME=sample; go test ./... runs one; reports/blame.md)" env TCM_BLAME=sample go test -count=1 -run TestFailuresBlameTheFaultAlone ./suites/selftest
run "the seed loop judges its client: a silent client, one that erases its verdicts, one that never ends; ci/examples/with-simulator.sh builds tcmkit from a checkout (TCM_SCRIPTS=1)" env TCM_SCRIPTS=1 go test -count=1 ./ci/fuzzseeds ./ci/examples
run "the kill matrix's hand-written and derived faults that go test ./... left out: with its one of each family of requirements and the new ones, all of them (TCM_KILLMATRIX=named-unsampled; TCM_KILLMATRIX=named runs them all)" env TCM_KILLMATRIX=named-unsampled go test -count=1 -run TestKillMatrix ./suites/killmatrix
run "the kill matrix's generated faults and a sample of the probe grid's cells, one of each requirement and every cell that escaped once (TCM_KILLMATRIX=generated,cell-sample; the step above and go test ./... ran the other faults; TCM_KILLMATRIX=cells runs every cell, by hand)" env TCM_KILLMATRIX=generated,cell-sample go test -count=1 -run TestKillMatrix ./suites/killmatrix
run "both profiles against a simulator process on its manual clock: requests, and what quick leaves untried (ci/profiles.sh)" ci/profiles.sh
run "the simulator's container image with podman, judged by the suite (ci/container.sh)" ci/container.sh
run "go install …/cmd/tcmkit@VERSION from a local module proxy on an empty module cache; the installed binary judges what it serves (ci/install.sh)" env KEEP_GOCACHE=1 ci/install.sh
collect

# ---------------------------------------------------------------------------
# FURTHER STEPS (lead): add CI steps here, one line each:
#   run "what it does" command args...
# The simulator load benchmark (ci/load/) is NOT run in CI by default.
# ---------------------------------------------------------------------------
# First contact (issue 26): the release before the README,
# whose builds reuse its build cache (-trimpath, CGO_ENABLED=0).
# the binaries built ahead (their step's verdict is collected with the
# other background steps')
await "$binaries_job" || true
run "a release: six static binaries, the image (built twice: the same bytes), SHA256SUMS; the linux/amd64 one judges its own simulator (ci/release.sh)" env REPRO=1 ci/release.sh v0.0.0-ci
run "the README's first screen and runnable examples, as written, in a fresh clone (ci/readme.sh)" ci/readme.sh

run "nothing this run started still runs: no process with its TCM_CI_RUN, no podman container with its label" nothing_left

took=$((SECONDS - started))
if ((${#failed[@]} > 0)); then
	printf '\n==> %d step(s) failed:\n' "${#failed[@]}"
	printf '    %s\n' "${failed[@]}"
	printf '\n==> ci/check.sh: FAILED: %d of %d steps passed, %d failed (%s), in %d min %02d s\n' \
		"$((steps - ${#failed[@]}))" "$steps" "${#failed[@]}" "$(IFS=';'; echo "${failed[*]%% (*}" | sed 's/;/; /g')" "$((took / 60))" "$((took % 60))"
	exit 1
fi
printf '\n==> ci/check.sh: passed: %d of %d steps passed, in %d min %02d s\n' "$steps" "$steps" "$((took / 60))" "$((took % 60))"
