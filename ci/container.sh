#!/usr/bin/env bash
# The container image of the simulator (Containerfile), built and run with
# podman (Debian's packages podman and runc, installed with apt-get when
# missing), then judged:
#   1. the image holds the static binary alone (FROM scratch);
#   2. started without a control token it refuses to listen on 0.0.0.0
#      and says why (exit 2);
#   3. started with TCM_SIM_CONTROL_TOKEN from the environment it serves:
#      its health check passes, the control API refuses a request without
#      the token and answers one with it;
#   4. the conformance suite, run against it over HTTP, passes;
#   5. the simulator service of the docker-compose example
#      (ci/examples/compose/compose.yaml) starts with podman-compose on the
#      same image and answers, behind its token.
# Everything runs on 127.0.0.1 (--network host) and is removed at the end.
# Podman on this kind of machine needs runc, cgroupfs and a containers.conf
# with default_ulimits = [] (written to a temporary file, CONTAINERS_CONF).
# About 30 s once podman is installed. ci/check.sh (and so .ci/run) calls it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
command -v curl >/dev/null || missing+=(curl)
command -v jq >/dev/null || missing+=(jq)
command -v podman-compose >/dev/null || missing+=(podman-compose)
if ((${#missing[@]} > 0)); then
	echo "ci/container.sh: installing ${missing[*]} (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; }
fi
podman --version

tmp="$(mktemp -d)"
image="localhost/tcmkit-simulator:ci-$$"
name="tcmkit-simulator-ci-$$"
export CONTAINERS_CONF="$tmp/containers.conf"
printf '[containers]\ndefault_ulimits = []\n' >"$CONTAINERS_CONF"
podman=(podman --runtime runc --cgroup-manager cgroupfs)
compose=(podman-compose --podman-args="--runtime runc --cgroup-manager cgroupfs" -p "tcmci$$" -f ci/examples/compose/compose.yaml)
cleanup() {
	TCM_SIM_CONTROL_TOKEN=x "${compose[@]}" down >/dev/null 2>&1 || true
	"${podman[@]}" rm -f -t 0 "$name" >/dev/null 2>&1 || true
	"${podman[@]}" rmi -f "$image" localhost/tcmkit-simulator:latest >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# 1. Build: the binary first, then the image from a context that holds it.
mkdir -p "$tmp/context/bin"
CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$tmp/context/bin/simulator" ./cmd/simulator
"${podman[@]}" build --quiet --format docker -t "$image" -f Containerfile "$tmp/context" >/dev/null
# The compose example names the image localhost/tcmkit-simulator:latest.
"${podman[@]}" tag "$image" localhost/tcmkit-simulator:latest
files=$("${podman[@]}" image inspect --format '{{len .RootFS.Layers}}' "$image")
size=$("${podman[@]}" image inspect --format '{{.Size}}' "$image")
echo "image $image: $files layer(s), $((size / 1024 / 1024)) MiB"
[[ "$files" == 1 ]] || { echo "want one layer (the binary on scratch)"; exit 1; }

# 2. No token: it must refuse to expose an open control API.
set +e
out=$("${podman[@]}" run --rm --no-healthcheck --network host -e TCM_SIM_ADDR=0.0.0.0:0 "$image" 2>&1)
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
"${podman[@]}" run -d --no-healthcheck --name "$name" --network host \
	-e TCM_SIM_ADDR="0.0.0.0:$port" -e TCM_SIM_CONTROL_TOKEN="$token" -e TCM_SIM_SPEED=60 "$image" >/dev/null
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
	curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' -d '{}' "$base/api/public/health" 2>/dev/null && break
	sleep 0.1
done
# The image's HEALTHCHECK command, run by hand (podman's timers need systemd).
"${podman[@]}" exec "$name" /simulator --health-check
echo "health check inside the container: ok"
status=$(curl -s -o /dev/null -w '%{http_code}' "$base/_control/info")
[[ "$status" == 401 ]] || { echo "control API without the token: $status, want 401"; exit 1; }
info=$(curl -fsS -H "X-Control-Token: $token" "$base/_control/info")
echo "control API: 401 without the token, 200 with it"

# 4. The suite, over HTTP, against the container (--speed 60: a rate-limit
# window is one real second, so Retry-After waits are short).
go test -c -o "$tmp/suite.test" ./suites
(cd "$tmp" && ./suite.test --target "$base" \
	--pro-key "$(jq -r .proKey <<<"$info")" --free-key "$(jq -r .freeKey <<<"$info")" \
	--revoked-key "$(jq -r .revokedKey <<<"$info")" --report-dir "$tmp/report" -ginkgo.no-color >"$tmp/suite.out" 2>&1) ||
	{ cat "$tmp/suite.out"; echo "the suite failed against the container"; exit 1; }
grep -E '^(Ran|SUCCESS|FAIL)' "$tmp/suite.out"
echo "the container passes the conformance suite; its log ends:"
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
