#!/usr/bin/env bash
# Renders a conformance report in headless Chromium to a PNG, to look at it
# as a person would (Debian's chromium, installed when missing):
#
#   ci/hostile/screenshot.sh REPORT.html OUT.png [WIDTH,HEIGHT]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 REPORT.html OUT.png [WIDTH,HEIGHT]" >&2; exit 2; }
if ! command -v chromium >/dev/null; then
  "$(dirname "${BASH_SOURCE[0]}")/../apt-install.sh" chromium
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size="${3:-1280,2200}" \
  --screenshot="$(realpath -m "$2")" "file://$(realpath "$1")" 2>/dev/null
echo "$2"
