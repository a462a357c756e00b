#!/usr/bin/env bash
# The simulator's page (GET /_control/ui) in headless Chromium (Debian's
# package chromium, installed with apt-get when missing): the simulator runs
# behind a control token, a client breaks the rate limit and another
# behaves, and the page must load with the token (given as Basic's
# password, as a browser's prompt would), show the failed CLIENT-RATE with
# the request it quotes, filter the journal to the 429s, advance the clock
# by an hour on a click, and hold no whole key. ci/browser (chromedp, its
# own module; ui.go) drives the browser. About 5 s once Chromium is
# installed. ci/check.sh (and so .ci/run) calls it.
#
#   SCREENSHOT=simulator/controlui.png ci/ui.sh   # refresh the README's screenshot
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
start=$SECONDS

chromium=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x "$chromium" ]]; then
	ci/apt-install.sh chromium
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/simulator" ./cmd/simulator
(cd ci/browser && go build -o "$tmp/browser" .)
"$tmp/browser" --ui --simulator "$tmp/simulator" --chromium "$chromium" --screenshot "${SCREENSHOT:-$tmp/ui.png}"
echo "ci/ui.sh: $((SECONDS - start)) s"
