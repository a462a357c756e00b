#!/usr/bin/env bash
# Record and replay, as processes, in real time at 20 requests a minute:
#   1. tcmkit record records a simulator (16 channels, 21 days: about 36
#      requests, so it waits for one rate window);
#   2. tcmkit simulate --world serves the recording, frozen; recording the
#      replay gives the same feeds, event for event (ids, order, fields), the
#      same videos (summary, firstSeenAt) and the same tracking;
#   3. a conforming draw of unusual choices (322: its own key order, status
#      error codes, long cursors, one rate budget for both operations,
#      Retry-After as a date) is recorded and served: the banner and the info
#      say it is served in the kit's own shape;
#   4. no key, whole or a fragment of 12, is in a recording, a progress
#      file or an output;
#   5. no key of the recorded simulator is valid in its replay (both of
#      seed 1: the replay's keys are fresh), and the replay's printed Pro
#      key is Pro; the banner says the world is frozen.
# It prints the figures of each recording (requests, events, bytes, time).
# About 3 minutes, nearly all of it waiting on rate windows; everything
# listens on 127.0.0.1 and stops by itself.
source "$(dirname "${BASH_SOURCE[0]}")/simulators.sh"
go build -o "$work/" ./cmd/simulator ./cmd/tcmkit

# rec NAME SIM ARGS...: records simulator SIM into $work/NAME.json, and
# prints what it took.
rec() {
	local name="$1" sim="$2" t0
	shift 2
	t0="$(date +%s)"
	if ! timeout 600 "$work/tcmkit" record --target "$(field "$sim" url)" --pro-key "$(field "$sim" proKey)" \
		--free-key "$(field "$sim" freeKey)" --out "$work/$name.json" "$@" >"$work/$name.out" 2>"$work/$name.log"; then
		echo "tcmkit record of $sim failed:"; tail -5 "$work/$name.log"; return 1
	fi
	echo "recorded $sim in $(($(date +%s) - t0)) s: $(jq -r '.recording | "\(.requests) requests, \(.events) events, \(.videos) videos"' "$work/$name.json"), $(wc -c <"$work/$name.json") bytes"
	grep -m1 'waiting' "$work/$name.log" || true
}

# feeds NAME: each account's feed of a recording (its events, oldest
# first), the videos as the API showed them, and the tracking.
feeds() {
	jq -c '. as $r | {
		feeds: [.world.accounts[] | . as $a | [$r.world.events[] | select(.channel.id as $c | $a.channels | index($c))]],
		videos: [.world.videos[] | {platformVideoId, title, thumbnailUrl, publishedAt, membersOnly, views, likes, comments, hidden, firstSeenAt}],
		tracking: [.world.accounts[] | {plan, channels}]}' "$work/$1.json"
}

failed=0
echo "== 1. record a simulator in real time"
start original --speed 1 --channels 16 --history 504h
rec a original || failed=1
if ! grep -q 'left, about' "$work/a.log"; then echo "no progress line saying how long is left"; failed=1; fi

echo "== 2. serve the recording, frozen, and record it again"
start replay --speed 1 --world "$work/a.json" --frozen
grep 'recording:' "$work/replay.log" || { echo "the replay does not say it serves a recording"; failed=1; }
rec b replay || failed=1
if [[ "$(feeds a)" == "$(feeds b)" && -n "$(feeds a)" ]]; then
	echo "the replay answers as the original did: $(feeds a | jq '[.feeds[] | length] | "feeds of \(.) events"'), $(feeds a | jq '.videos | length') videos"
else
	echo "the replay's feeds, videos or tracking differ from the original's"; failed=1
fi

echo "== 2b. the replay's keys: fresh, each what the banner says it is"
status() { # status SIM KEY PATH [BODY]: the status SIM answers KEY on PATH
	local body="${4:-}"
	if [[ -n "$body" ]]; then
		curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $2" -H 'Content-Type: application/json' --data "$body" "$(field "$1" url)$3"
	else
		curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $2" "$(field "$1" url)$3"
	fi
}
for k in proKey freeKey revokedKey; do
	st="$(status replay "$(field original "$k")" /api/public-feed)"
	if [[ "$st" != 401 ]]; then echo "the recorded simulator's $k answers $st in the replay, want 401"; failed=1; fi
done
pro="$(field replay proKey)"
if [[ "$(status replay "$pro" /api/public/videos '{"videoIds":["x"]}')" != 200 ]] || ! grep -qF "pro key:     $pro  (account acc_1, plan pro; hint" "$work/replay.log"; then
	echo "the replay's printed Pro key is not a Pro key:"; grep 'key:' "$work/replay.log" | sed 's/tcm_[A-Za-z0-9]\{32\}/tcm_KEY/g'; failed=1
else
	echo "no key of the recorded simulator is valid in the replay; its Pro key is Pro ($(jq -r '.keys[0].hint' "$work/replay.json"))"
fi
grep -q "recorded at .*; frozen: time passes, nothing new happens" "$work/replay.log" || { echo "the replay's banner does not say it is frozen"; failed=1; }

echo "== 3. a conforming draw of unusual choices, recorded and served"
start draw --speed 1 --conforming-draw 322
rec d draw || failed=1
start draw-replay --speed 1 --world "$work/d.json"
if grep -q "recording:.*kit's own conforming shape" "$work/draw-replay.log" && [[ "$(jq -r '.recording.shape' "$work/draw-replay.json")" == *"kit's own conforming shape"* ]]; then
	echo "the draw's recording says: $(jq -r '.recording.reshaped' "$work/d.json") events re-encoded; $(jq -r '.recording.shape' "$work/draw-replay.json")"
else
	echo "the draw's replay does not say in what shape it serves"; failed=1
fi

echo "== 4. no key in a recording or an output"
for sim in original replay draw draw-replay; do
	for k in proKey freeKey revokedKey; do
		key="$(field "$sim" "$k")"
		if grep -rqF -e "$key" -e "${key: -12}" "$work"/*.json.partial "$work"/[abd].json "$work"/[abd].out "$work"/[abd].log 2>/dev/null; then
			echo "a key of $sim ($k) is in a recording or an output"; failed=1
		fi
	done
done
exit "$failed"
