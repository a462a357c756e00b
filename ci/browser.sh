#!/usr/bin/env bash
# The simulator from a web page of another origin, in a real browser:
# headless Chromium (Debian's package chromium, installed with apt-get when
# missing; no tool downloads a browser of its own) opens a page served on
# one port of 127.0.0.1 that calls the simulator on another (--cors for the
# page's origin): it reads a feed page and a tracked-videos answer with the
# Pro key, sees a 429 and reads its Retry-After, and a text/plain POST to
# the control API is refused. ci/browser (its own Go module, chromedp)
# drives the browser and judges what the page saw. About 10 s once
# Chromium is installed. ci/check.sh (and so .ci/run) calls it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

chromium=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x "$chromium" ]]; then
	ci/apt-install.sh chromium
fi
"$chromium" --version

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/simulator" ./cmd/simulator
(cd ci/browser && go vet . && go build -o "$tmp/browser" .)
# The check bounds itself: 90 s at most, the simulator and the browser are
# its children and end with it.
"$tmp/browser" --simulator "$tmp/simulator" --chromium "$chromium" --screenshot "${SCREENSHOT:-$tmp/page.png}"
