// Package clients judges the clients that talk to the simulator against
// the client requirements of the catalogue (schemas/catalogue, kind
// "client"): the spec binds clients too, and a mock that answers whatever
// it is sent tells a client developer nothing. A Judge is a
// simulator.ClientJudge: it sees every exchange of the API as it is
// served (simulator.Config.Clients = Judging(cfg)), keeps what it needs per key, bounded
// in memory whatever a client sends, and gives a verdict per key and per
// requirement, with findings that name the request (method, path, query
// with keys redacted), the rule and the evidence. No key, nor any part of
// one, is kept or shown: a key is its hint (tcm_…#3f9a) and its id (16 hex
// digits of its SHA-256).
//
// # What is judged
//
//   - CLIENT-BEARER: every feed and tracked-videos request carries one
//     Authorization header, Bearer <key>, the key whole (the scheme name
//     in any case).
//   - CLIENT-KEY-NOT-IN-URL: no key in any part of the request target
//     (the path, the query string, also percent-encoded, a fragment sent,
//     the userinfo of an absolute-form target, the host), a Referer or a
//     body.
//   - CLIENT-RETRY-AFTER: after a 429 with Retry-After (the limiter's or
//     an injected one), the key's next request to that operation, sent
//     once the 429 reached the client, comes no sooner than Retry-After
//     says, on the clock the server counts it on
//     (simulator.Exchange.RateTime). The judge sees arrivals, and stays
//     on the client's side: a request that arrived before the 429 was
//     answered, or on another connection within 50 ms after
//     (inFlightMargin), may have been in flight and is no retry; the 429s
//     of such requests join the first, and a retry honours the wait that
//     ends last. On the connection of any of those 429s a request that
//     arrived after the answer is a retry (HTTP/1.1 answers one request
//     at a time).
//   - CLIENT-RATE: at most 20 feed requests of a key (with the key in its
//     Authorization header) within any 60 seconds, on the clock the server
//     counts on, whatever the answers: each request past 20 in a sliding
//     minute (in real time less a second for transit, as the judge sees
//     arrivals; on the manual clock the minute is exact) breaks
//     it, however the 429s came (the limiter's, a scenario's, none). One burst of 21 is a finding even when the client
//     then waits out the Retry-After: the contract's limit binds the
//     client, and the catalogue says so.
//   - CLIENT-CURSOR-ISSUED: a cursor is one the server handed to a key of
//     the same account (a key regenerated mid-walk may go on with it);
//     invented, edited and other accounts' cursors are findings, never
//     quoted. An empty cursor (cursor=) is a finding too: it is not an
//     omitted one ("" is never handed out), though the simulator serves it
//     the first page; so are two cursors.
//   - CLIENT-WALK-END: a walk begins when the key follows a nextCursor and
//     ends when a page has nextCursor null, or when a page reaches down to
//     events the key was already given: a client that syncs reads the new
//     events and stops at those it has (the judge keeps, per key, the
//     createdAt down to which the key was given every event, from the
//     walks it finished, and the newest event of the first page it read
//     before the walk's, whatever became of a walk begun from that one). A walk still open when the client goes idle (no
//     feed request of the key for Config.IdleAfter, on the rate clock) or
//     when the run ends (final verdicts) is abandoned. Walking a newer
//     first page to its end closes the walks begun before it
//     (CLIENT-FIRST-PAGE-AGAIN). A client that reads on past the end of a
//     walk (down to what it had) goes on with the same walk. A walk the
//     server stopped is cut, not abandoned: a page that leads back to a
//     cursor the walk followed (a cycle, which CLIENT-CURSOR-CYCLE asks the
//     client to leave: the two rules never ask for opposite things), the
//     key revoked or unknown (the client could not go on),
//     an answer that broke the contract on purpose (Exchange.Breaks: a
//     fuzz schedule's), or a 429 that refuses the key for longer than the
//     rate window (a client may give up rather than wait). So is a walk
//     the server would not let go on until the client gave up: its
//     cursor, handed out by the server, answered 400 (the query otherwise
//     valid), or the key's last feed request answered 401, 403, 5xx or not
//     at all (see refusal). Observers may see a key's pages out of
//     order (a client on new connections asks for the next page before
//     the last one's observers ran): a page waits for the page that handed
//     out its cursor, and the walk goes on in the order of the requests.
//   - CLIENT-VIDEO-IDS and CLIENT-JSON-BODY: the tracked-videos request is
//     judged with the server's own reading (simulator.ParseVideosRequest):
//     a Content-Type other than application/json, or a body that is not a
//     JSON object, is CLIENT-JSON-BODY; a JSON object whose videoIds is
//     not 1 to 20 strings of 1 to 32 characters is CLIENT-VIDEO-IDS. The
//     body is judged as sent, whatever the answer (the simulator reads it
//     for its observers before a 401 or a 403 too). The health check's
//     body (the spec: a JSON object, as application/json) is held to
//     CLIENT-JSON-BODY too.
//   - CLIENT-BACKOFF: after an error answer (a 5xx, an answer cut short or
//     a connection closed without one: no status; a feed 200 whose body is
//     cut short, not a page), the key's next request
//     to that operation within a second of the rate clock extends a run;
//     TightLoop of them in a row is a tight loop, and each request of the
//     run from then on is counted, its evidence the run's length so far.
//   - CLIENT-CURSOR-CYCLE: a page whose nextCursor is a cursor its walk
//     already followed (among the client's last 128 follows: the cursor
//     that reached it, or an earlier one) is a cycle (no conforming server
//     makes one; the named fault cursor-cycles and a fuzz schedule with
//     :break do); following the cycle back CycleLaps times is a finding,
//     and each time after is counted with its number.
//
// The open points are never findings: reading the first page again
// (CLIENT-FIRST-PAGE-AGAIN) and sending a key to the health check
// (CLIENT-HEALTH-KEY) are counted in a client's notes. A requirement a
// client never met (no 429 came, no walk began) is "not exercised", with
// the reason, and fails nothing.
//
// A key breaks a requirement once: its one finding of the requirement
// shows the first request that broke it, counts them all and names the
// last, with its own evidence. Evidence says exact counts (a run's
// length, the follows of a cycle, walks each counted once) and times to
// the millisecond, cut, or finer where the millisecond does not tell a
// wait from the one asked for.
//
// Requests with no well-formed Bearer key are the client "" unless a key
// shows elsewhere in them (Basic credentials or another scheme, decoded;
// any part of the URL; a header; a cookie; the body): then they are that
// key's, a key of one of the simulator's accounts first. A finding of
// the client "" is also shown on the verdicts of the key whose client sent
// it (Client.SentWithoutKey; Finding.SentBy says how that is known) when
// that is unambiguous: the request came on a connection
// (simulator.Exchange.Conn) that carried that key alone, or the run has
// that key alone. It fails the client "" and the run, not the key (a pool
// of connections or a simulator shared by several clients can make another
// client's request look like this key's). Every key's verdicts name the
// requests without a key and what they broke (Client.Keyless). Every key that made a request is judged: the judge keeps up to
// Config.MaxClients keys of the simulator's accounts and as many others;
// past that a key's requests are counted, not judged, and the verdicts
// are errored ("N keys not judged"), never passed. Verdicts no client
// came to are errored too: there was nothing to judge. A browser's CORS preflight (OPTIONS) is not the client's request
// and is not judged.
//
// # Verdicts, report and exit status
//
// Verdicts (GET /_control/clients) have an outcome, the same as the
// client report's (Report, Judge.WriteReport: cmd/simulator
// --client-report): errored when a key was not judged or no client came,
// else failed when a client failed a requirement or its scenario, else
// passed. ExitStatus maps it to the binary's exit status: 0, ExitFailed
// (3), ExitErrored (4). The verdicts survive clearing the journal; DELETE
// /_control/clients (Judge.Reset), a reset and an import start them
// again.
//
// # Scenarios
//
// A scenario (Scenarios, --scenario, POST /_control/scenarios) puts a
// client to the test: it arms, acts once on the virtual clock and the
// simulator's faults when its moment comes (at once, or when a client
// begins a walk), says what a good client must do, and judges how each
// client did, beside the requirements.
package clients
