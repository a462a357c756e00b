#!/usr/bin/env bash
# The kit's container image (Containerfile), built from source and run with
# podman (Debian's packages podman and runc, installed by ci/apt-install.sh
# when missing), then judged:
#   1. the image is built by the Containerfile alone, from the committed
#      tree (git archive HEAD, as a fresh clone has it), and tagged
#      localhost/tcmkit:dev. This machine reaches no image registry and no
#      module proxy inside a build, so the build stage stands on
#      localhost/go-local:<go version>, an image made here from this
#      machine's Go (/usr/local/go) and /bin/sh, and the modules come from
#      a file proxy put in the context (GOPROXY=file://…, made from this
#      machine's module cache). ONLINE=1 builds as a user would: the official
#      Go image and the Go module proxy. The build time and image size are
#      printed; the image holds the static binary alone (FROM scratch);
#   2. `simulate` started without a control token refuses to listen on
#      0.0.0.0 and says why (exit 2); (the README's podman run lines, as
#      written, are ci/readme.sh's: it runs them on this image);
#   3. `simulate` with TCM_SIM_CONTROL_TOKEN from the environment serves:
#      its health check passes, the control API refuses a request without
#      the token and answers one with it;
#   4. `conform` from the image judges `simulate` from the image (on the
#      manual clock, on 127.0.0.1) over HTTP and passes, its reports
#      written into a mounted directory (-v "$PWD/reports:/reports"),
#      readable by the user who ran it; `conform` against the image's own
#      bundled simulator passes too;
#   5. the simulator service of the docker-compose example
#      (ci/examples/compose/compose.yaml) starts with podman-compose on the
#      same image and answers, behind its token.
# Everything runs on 127.0.0.1 (--network host). Every container it starts
# carries the label tcmkit.ci.run=$TCM_CI_RUN (ci/check.sh sets it; this
# script's own id otherwise): at the end, whatever the outcome, those and
# the compose example's are removed, and the script fails when one is left.
# The temporary files go too, and so do the build stage's images;
# localhost/tcmkit:dev and localhost/go-local stay (a second run reuses the
# stand-in, and the Go build cache of podman's cache mount). Podman on this
# kind of machine needs runc, cgroupfs and a containers.conf without
# default rlimits (ci/containers.conf, CONTAINERS_CONF).
#
#   ci/container.sh          all of the above
#   ci/container.sh build    step 1 alone: localhost/tcmkit:dev of HEAD
#                            (ci/readme.sh runs the README's lines on it)
#
# ci/check.sh (and so .ci/run) calls it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

mode="${1:-all}"
[[ "$mode" == all || "$mode" == build ]] || { echo "usage: ci/container.sh [build]" >&2; exit 2; }
ci/apt-install.sh podman runc curl jq podman-compose
podman --version

tmp="$(mktemp -d)"
image="localhost/tcmkit:dev"
name="tcmkit-ci-$$"
export CONTAINERS_CONF="$root/ci/containers.conf"
podman=(podman --runtime runc --cgroup-manager cgroupfs)
project="tcmci$$"
compose=(podman-compose --podman-args="--runtime runc --cgroup-manager cgroupfs" -p "$project" -f ci/examples/compose/compose.yaml)
# Every container this script starts carries this label (compose's carry
# their project's).
label="tcmkit.ci.run=${TCM_CI_RUN:-container-$$}"
ours() {
	"${podman[@]}" ps -a --filter "label=$label" --format '{{.ID}} {{.Names}} {{.Status}}'
	"${podman[@]}" ps -a --filter "label=com.docker.compose.project=$project" --format '{{.ID}} {{.Names}} {{.Status}}'
}
cleanup() {
	local code=$? left
	TCM_SIM_CONTROL_TOKEN=x "${compose[@]}" down -t 0 >/dev/null 2>&1 || true
	left="$(ours)"
	if [[ -n "$left" ]]; then
		"${podman[@]}" rm -f -t 0 $(awk '{print $1}' <<<"$left") >/dev/null || true
	fi
	# The build stage's images and earlier builds of the image, untagged:
	# gone (the Go build cache stays in podman's cache mount).
	"${podman[@]}" image prune -f --filter label=tcmkit.stage=build >/dev/null 2>&1 || true
	"${podman[@]}" image prune -f --filter label=org.opencontainers.image.title=tcmkit >/dev/null 2>&1 || true
	chmod -R u+w "$tmp" 2>/dev/null || true
	rm -rf "$tmp"
	left="$(ours)"
	if [[ -n "$left" ]]; then
		echo "ci/container.sh: containers it started are still there:"
		echo "$left"
		code=1
	else
		echo "ci/container.sh: no container it started is left"
	fi
	exit "$code"
}
trap cleanup EXIT

# 1. Build.
mkdir -p "$tmp/context"
git archive --format=tar HEAD | tar -x -C "$tmp/context"
build_args=(--build-arg "VERSION=$(git describe --tags --always --dirty 2>/dev/null || echo dev)")
if [[ "${ONLINE:-}" != 1 ]]; then
	go_version="$(go env GOVERSION)"
	go_image="localhost/go-local:${go_version#go}"
	if ! "${podman[@]}" image exists "$go_image"; then
		# A stand-in for the official image: Go where it keeps it, a shell
		# for RUN, and the directories a build uses.
		goroot="$(go env GOROOT)"
		mkdir -p "$tmp/stand-in/bin" "$tmp/stand-in/tmp" "$tmp/stand-in/root" "$tmp/stand-in/go"
		chmod 1777 "$tmp/stand-in/tmp"
		cp /bin/dash "$tmp/stand-in/bin/sh"
		libs=$(ldd /bin/dash | grep -o '/[^ ]*' | sed 's|^/||')
		tar -c --dereference -C / $libs -C "$tmp/stand-in" bin/sh tmp root go \
			--transform "s|^${goroot#/}|usr/local/go|" -C / "${goroot#/}" |
			"${podman[@]}" import --change 'ENV PATH=/go/bin:/usr/local/go/bin:/usr/bin:/bin' \
				--change 'ENV GOPATH=/go' --change 'ENV HOME=/root' --change 'WORKDIR /go' - "$go_image" >/dev/null
		echo "made $go_image from $goroot"
	fi
	# The modules the build needs (those go build fetches), as a file proxy
	# in the context.
	deps="$(go env GOMODCACHE)/cache/download"
	# go list loads what go build would, and compiles nothing.
	(cd "$tmp/context" && GOMODCACHE="$tmp/modcache" GOFLAGS=-mod=mod GOPROXY="file://$deps" go list -deps ./cmd/tcmkit >/dev/null)
	cp -r "$tmp/modcache/cache/download" "$tmp/context/.modproxy"
	build_args+=(--build-arg "GO_IMAGE=$go_image" --build-arg "GOPROXY=file:///src/.modproxy")
	# The image's Go is this machine's: its build reuses this machine's build
	# cache (the Containerfile builds -trimpath, CGO_ENABLED=0, like
	# ci/check.sh's steps), where a fresh podman cache compiled it all.
	build_args+=(--volume "$(go env GOCACHE):/hostcache" --build-arg "GOCACHE=/hostcache")
fi
start=$(date +%s.%N)
"${podman[@]}" build --network host --format docker "${build_args[@]}" -t "$image" -f Containerfile "$tmp/context" >"$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log"; echo "podman build failed"; exit 1; }
end=$(date +%s.%N)
layers=$("${podman[@]}" image inspect --format '{{len .RootFS.Layers}}' "$image")
size=$("${podman[@]}" image inspect --format '{{.Size}}' "$image")
printf 'podman build of %s: %.1f s; %d layer(s), %.1f MiB; %s\n' "$image" "$(echo "$end - $start" | bc)" "$layers" \
	"$(echo "$size / 1048576" | bc -l)" "$("${podman[@]}" run --rm --label "$label" "$image" version)"
[[ "$layers" == 1 ]] || { echo "want one layer (the binary on scratch)"; exit 1; }
[[ "$mode" == build ]] && exit 0

# 2. No token: it must refuse to expose an open control API.
set +e
out=$("${podman[@]}" run --rm --label "$label" --no-healthcheck --network host -e TCM_SIM_ADDR=0.0.0.0:0 "$image" simulate 2>&1)
code=$?
set -e
echo "without a token: exit $code: $out"
if [[ $code != 2 || "$out" != *"--control-token"* ]]; then
	echo "want exit 2 and a word about --control-token"
	exit 1
fi

# free_port prints a port of 127.0.0.1 that nothing listens on.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# 3. With a token from the environment, on a free port of this machine.
port=$(free_port)
token="ci-token-$RANDOM-$RANDOM-$RANDOM-$RANDOM" # at least 16 characters
"${podman[@]}" run -d --label "$label" --no-healthcheck --name "$name" --network host \
	-e TCM_SIM_ADDR="0.0.0.0:$port" -e TCM_SIM_CONTROL_TOKEN="$token" -e TCM_SIM_SPEED=60 "$image" simulate >/dev/null
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
	curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' -d '{}' "$base/api/public/health" 2>/dev/null && break
	sleep 0.1
done
# The image's HEALTHCHECK command, run by hand (podman's timers need systemd).
"${podman[@]}" exec "$name" /tcmkit simulate --health-check
echo "health check inside the container: ok"
status=$(curl -s -o /dev/null -w '%{http_code}' "$base/_control/info")
[[ "$status" == 401 ]] || { echo "control API without the token: $status, want 401"; exit 1; }
info=$(curl -fsS -H "X-Control-Token: $token" "$base/_control/info")
echo "control API: 401 without the token, 200 with it"

# 4. conform from the image, over HTTP, against a simulator container on
# the manual clock (127.0.0.1 of the host network: its control API is open
# to loopback without a token, so the suite moves its clock instead of
# waiting a real minute for Retry-After; ci/field-runs.sh judges real time),
# its reports in a mounted directory of the user's.
port=$(free_port)
"${podman[@]}" run -d --label "$label" --no-healthcheck --name "$name-manual" --network host \
	-e TCM_SIM_ADDR="127.0.0.1:$port" -e TCM_SIM_SPEED=0 "$image" simulate >/dev/null
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
	info=$(curl -fsS "$base/_control/info" 2>/dev/null) && break
	sleep 0.1
done
mkdir -p "$tmp/user/reports"
cd "$tmp/user"
podman_run=("${podman[@]}" run --rm --label "$label" --network host)
"${podman_run[@]}" -v "$PWD/reports:/reports" "$image" conform --target "$base" --control-clock \
	--pro-key "$(jq -r .proKey <<<"$info")" --free-key "$(jq -r .freeKey <<<"$info")" \
	--revoked-key "$(jq -r .revokedKey <<<"$info")" --report-dir /reports --no-color >"$tmp/suite.out" 2>&1 ||
	{ cat "$tmp/suite.out"; echo "tcmkit conform (in the image) failed against tcmkit simulate (in the image)"; exit 1; }
grep -E '^(Ran|SUCCESS|FAIL)|report:' "$tmp/suite.out"
for f in conformance-report.json conformance-report.md conformance-report.html; do
	[[ -r "reports/$f" ]] || { ls -la reports; echo "reports/$f is not there, or not readable by $(id -un)"; exit 1; }
done
echo "reports in ./reports, readable by $(id -un): $(stat -c '%U %a' reports/conformance-report.json)"
"${podman_run[@]}" "$image" conform --no-color --report-dir /tmp/reports >"$tmp/bundled.out" 2>&1 ||
	{ cat "$tmp/bundled.out"; echo "tcmkit conform (in the image) failed against its bundled simulator"; exit 1; }
echo "conform against the image's bundled simulator: $(grep -E '^(SUCCESS|FAIL)' "$tmp/bundled.out")"
cd "$root"
echo "the simulator's log ends:"
"${podman[@]}" logs "$name" 2>&1 | tail -n 3

# 5. The compose example's simulator service (its port moved to a free one).
export TCM_DEMO_PORT=$(free_port) TCM_SIM_CONTROL_TOKEN="$token"
if ! "${compose[@]}" up -d simulator >"$tmp/compose.log" 2>&1; then
	cat "$tmp/compose.log"
	if grep -qiE 'netavark|cni|iptables|network' "$tmp/compose.log"; then
		# The compose file publishes a port on podman's bridge network; a
		# machine without one cannot run it as written. Said, not hidden.
		echo "compose example: NOT RUN: podman's bridge network is unavailable on this machine (see above)"
		exit 0
	fi
	exit 1
fi
demo="http://127.0.0.1:$TCM_DEMO_PORT"
for _ in $(seq 1 100); do
	curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' -d '{}' "$demo/api/public/health" 2>/dev/null && break
	sleep 0.1
done
if ! curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' -d '{}' "$demo/api/public/health"; then
	cat "$tmp/compose.log"
	echo "compose example: the simulator service does not answer on $demo"
	exit 1
fi
clock=$(curl -fsS -H "X-Control-Token: $token" "$demo/_control/clock")
[[ $(jq -r .mode <<<"$clock") == realtime ]] || { echo "compose example: clock $clock"; exit 1; }
status=$(curl -s -o /dev/null -w '%{http_code}' -X OPTIONS -H 'Origin: http://localhost:5173' \
	-H 'Access-Control-Request-Method: GET' -H 'Access-Control-Request-Headers: authorization' "$demo/api/public-feed")
[[ "$status" == 204 ]] || { echo "compose example: preflight of the page's origin: $status"; exit 1; }
echo "compose example: the simulator service answers (realtime clock, behind its token, CORS for the page)"
