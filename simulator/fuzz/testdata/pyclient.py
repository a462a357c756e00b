#!/usr/bin/env python3
"""A feed client in another language, for ci/fuzz-seeds.sh (issue 21).

It syncs the feed twice, ten minutes apart, waiting on the simulator's
manual clock (POST $TCM_CONTROL_URL/clock/advance) instead of sleeping, and
checks that it holds every event the simulator served
(GET $TCM_CONTROL_URL/fuzz). BUG=retry-after-zero plants a bug: a 429 with
Retry-After: 0 is taken as "do not ask again".

    ci/fuzz-seeds.sh 1 100 -- python3 simulator/fuzz/testdata/pyclient.py
    BUG=retry-after-zero ci/fuzz-seeds.sh 1 100 -- python3 simulator/fuzz/testdata/pyclient.py
"""
import http.client
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

BASE, KEY, CONTROL = os.environ["TCM_BASE_URL"], os.environ["TCM_PRO_KEY"], os.environ["TCM_CONTROL_URL"]
BUG = os.environ.get("BUG", "")


def control(method, path, body=None):
    req = urllib.request.Request(CONTROL + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def wait(seconds):
    if seconds > 0:
        control("POST", "/clock/advance", {"duration": f"{seconds}s"})


sent = []  # clock times of the requests, to keep to 20 a minute


def page(cursor):
    url = BASE + "/api/public-feed?limit=20" + ("&cursor=" + urllib.parse.quote(cursor) if cursor else "")
    backoff = 1
    for _ in range(20):
        now = control("GET", "/clock")["now"]
        if len(sent) >= 20 and now - sent[-20] < 61_000:
            wait((61_000 - (now - sent[-20])) / 1000)
            now = control("GET", "/clock")["now"]
        sent.append(now)
        req = urllib.request.Request(url, headers={"Authorization": "Bearer " + KEY})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            if e.code == 429:
                ra = int(e.headers.get("Retry-After", "1"))
                if ra == 0 and BUG == "retry-after-zero":
                    raise SystemExit("429 with Retry-After: 0: giving up")
                wait(ra)
                continue
            if e.code < 500:
                raise SystemExit(f"feed: {e.code}")
        except (urllib.error.URLError, http.client.HTTPException, json.JSONDecodeError, OSError):
            pass
        wait(backoff)
        backoff = min(2 * backoff, 30)
    raise SystemExit("feed: giving up after 20 attempts")


held = {}


def sync(first):
    cursor, followed = None, set()
    while True:
        p = page(cursor)
        met = False
        for e in p["events"]:
            met = met or e["id"] in held
            held[e["id"]] = e
        nxt = p.get("nextCursor")
        if nxt is None or (met and not first):
            return
        if nxt in followed:
            raise SystemExit("the feed handed out a cursor twice in one walk")
        followed.add(nxt)
        cursor = nxt


try:
    sync(True)
    wait(600)
    sync(False)
except SystemExit as e:
    if control("GET", "/fuzz")["mayFail"]:
        sys.exit(0)
    raise
served = control("GET", "/fuzz")["eventIds"]
if sorted(served) != sorted(held):
    sys.exit(f"holds {len(held)} events, the simulator served {len(served)}")
