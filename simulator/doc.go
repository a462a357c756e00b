// Package simulator serves the Tracked-Channel Monitoring API from a seeded
// world (package simulator/world) in virtual time: the feed, the tracked
// videos and the health check exactly per the spec, with keys that get
// revoked, a Pro gate, rate limits with a truthful Retry-After, injected
// faults, and a control API for tests and demos. It runs in-process (New,
// Handler) or as cmd/simulator.
//
// The spec leaves some things open. What the simulator chose on each open
// point is stated once, with the point, in the requirement catalogue
// (schemas/catalogue/requirements.json, simulatorChoice; every conformance
// report lists them): the error strings (ERROR-STRINGS), the order of the
// checks (ERROR-PRECEDENCE), health without a key (HEALTH-AUTH), invalid
// limits and unknown cursors (FEED-LIMIT-INVALID, FEED-CURSOR-UNKNOWN),
// missing ids (VIDEOS-MISSING-CONDITION), rate-limit budgets (RATE-SCOPE),
// orderings and windows inside a VideoEntry (ENTRY-ORDER,
// ENTRY-WINDOW-MEANING), milestones (EVENT-MILESTONE). Below is how it
// does the rest.
//
// # Layout
//
// A request is followed top to bottom in serve.go (its comment names where
// a new step goes); the other files hold what it calls:
//
//	serve.go            the path of a request: the call (one value per request), routing,
//	                    the per-operation wrapper (injected faults, Config.Layers),
//	                    writeAnswer (the one writer of answers), the journal's record, observers
//	operation.go        Operation, and a route of the API
//	layer.go            Layer and Answerer: the one seam that changes answers (named
//	                    faults, conforming draws, fuzz schedules), in Config.Layers
//	api.go              the API's route table and its handlers (feed, videos, health)
//	answer.go           Answer (the answer as a value), ErrorBody and the error codes, the 400 of a query
//	cors.go             CORS for the API
//	keys.go             keys: issue, parse, authenticate
//	importcheck.go      what an import must hold to, in one place; the keys of an export
//	redact.go           keys where they should not be: redaction, the keys an observer is told of
//	limit.go, cache.go  rate limits; kept 200 answers
//	journal.go          the request journal (GET /_control/requests)
//	observe.go          Exchange, Observer and the client judge's interface
//	faults.go           injected faults (FaultSpec) and their set
//	server.go           Config, New, the state a reset replaces, the clock's ticks, the
//	                    Server's methods for a judge (RegenerateKey, AddFault, RateNow)
//	listen.go, clock.go HTTPServer; the virtual clock
//	gather.go           Listener: an answer in one writev (a tracked-videos answer's pieces, a page and its header)
//	control_routes.go   the control API's route table and its guard
//	control_accounts.go control routes of accounts, faults, the edge rate, info
//	control_world.go    control routes of the clock, polls, reset, export and import
//	control_clients.go  control routes of the journal, the clients' verdicts, the scenarios
//	control_client.go   Control, the control API's Go client
//	recording.go        a recorded world (tcmkit record): Recording, its fresh keys, Config.World
//
// # Answers
//
// Every answer has Content-Type application/json; every error, 404 and 405
// included, is an ErrorBody {"error","message","details"?}. A 405 carries
// Allow. Unclean paths (//, /./, /../) are a 404, not a redirect; so is
// OPTIONS * (HTTPServer keeps net/http from answering it). A panic becomes
// a 500 ErrorBody and an error in the log. Nothing of a request is ever
// echoed into a response header (but an Origin that was configured, in
// Access-Control-Allow-Origin). The exceptions: a CORS preflight is a 204
// without a body, GET /_control/openapi.yaml is YAML, and the few broken
// HTTP messages that net/http refuses before any handler sees them, which
// HTTPServer's doc lists. The Date header is the virtual clock's time,
// the server's own (a recorder takes a recording's time from it), on
// every answer (a 429, a fault's, the control API's) at any speed; a
// Retry-After that is an HTTP-date (a conforming draw's) is on that clock
// too: it minus Date is the wait.
//
// # Browsers
//
// Config.CORSOrigins (--cors) lets web pages of those origins ("*": any)
// call the API: a preflight (OPTIONS with Origin and
// Access-Control-Request-Method) is answered 204 with Authorization and
// Content-Type allowed, and every answer, errors included, carries
// Access-Control-Allow-Origin and exposes Retry-After and
// WWW-Authenticate. Off by default (the spec says nothing of browsers): a
// preflight is then a 403 ErrorBody that names the flag.
//
// # Keys
//
// Authorization: Bearer <prefix>_<32 letters or digits> (the scheme name is
// case-insensitive). A missing or empty header is missing_api_key; another
// scheme, two Authorization headers, or a key not of that form is
// malformed_api_key; a well-formed key that was never issued is
// invalid_api_key; a regenerated account's old key is revoked_api_key. All
// are 401 with WWW-Authenticate: Bearer. The server keeps SHA-256 hashes
// of keys and looks a presented key up by its hash, so neither the map nor
// the timing of a lookup reveals a key; logs show only the redacted form
// tcm_…#3f9a, also where a careless client put a key in a path or a query,
// and "…" for a piece of 8 or more characters of a key it issued (it
// knows the last 4096 keys' pieces by keyed hashes only).
// Keys derive from (Seed, n), so the same seed gives the same keys; anyone
// who knows the seed knows them, which is why the binary listens on
// 127.0.0.1 by default. A served recording's keys derive from a fresh
// random salt instead, so that no key a user holds from another world
// (the recorded one, the seeded world of the same seed) is valid in it, in
// any role. A key is issued once: a regenerated key is one the keyring
// never held, and a revoked key stays revoked. The seeded accounts: Pro and free, which track
// overlapping sets of channels, neither inside the other (so each account's
// feed holds channels the other's does not), and a third (Pro) account
// whose first key was regenerated: that first key is Keys.Revoked.
//
// # Feed query
//
// limit: ASCII digits only; omitted means schemas.DefaultPageSize; above
// schemas.MaxPageSize it is capped (a whole number too long for an int
// too). 0, -1, +5, 1.5, 1e99, an empty value, undecodable escapes or a
// second limit are a 400. cursor: omitted or empty means the first page; a
// cursor that is garbage, truncated, or another account's is a 400; a
// second cursor is a 400. Other parameters are ignored. The 400's details
// are {"invalid":["limit",...],"problems":[{"parameter","value","rule"}]};
// the query is checked first, the cursor is looked up after.
//
// # Tracked-videos request
//
// Content-Type must be application/json (charset utf-8 if given): anything
// else is a 400, not a 415, because the spec lists 400 for an invalid
// request. The body is at most MaxBodyBytes (64 KiB; more is a 400), must
// be UTF-8 and one JSON value, and is validated with the compiled schema
// schemas.VideosRequest, the one the suite uses; the violations (pointer,
// keyword, rule, value) are the 400's details {"violations":[...]}. Every
// 400 of the operation has that shape: a body that is not JSON, not UTF-8
// or too large is one violation at pointer "" (keyword json, utf8,
// maxBytes), a wrong Content-Type one with keyword Content-Type.
// Unknown fields are tolerated. ParseFeedQuery, ParseBearer and
// ParseVideosRequest read a request as the server does.
//
// # Rate limits and time
//
// One virtual clock drives polling, timestamps, rate-limit windows and
// Retry-After. Speed 0 is a manual clock, moved only by Advance or POST
// /_control/clock/advance; Speed s > 0 runs virtual time at s × real time
// (a background poller catches the world up every 200 ms of real time, and
// every request catches it up before it reads).
//
// Each API key has two budgets (RATE-SCOPE), Config.FeedLimit and
// Config.VideosLimit. A budget is a sliding window, not a token bucket: a
// request is granted if fewer than limit requests of that key were granted in the
// schemas.RateWindow (one minute of virtual time) before it. So no minute
// ever holds more than limit granted requests, which is what "20 requests
// per minute" says; a token bucket (golang.org/x/time/rate) of burst 20
// would let 40 through in a minute. Refused requests do not count.
//
// A 429 carries Retry-After in whole seconds, rounded up, that is exactly
// when the next request will be granted: when the oldest grant in the
// window leaves it. After a burst of 20 at one instant, Retry-After is 60
// and then 20 requests succeed; after 20 requests spread over the minute,
// Retry-After is what remains until the first of them is a minute old, and
// then one succeeds. In manual mode windows and Retry-After are in virtual
// time (a test advances the clock that much). In realtime mode they are in
// real time plus the clock's advances, whatever the speed: at --speed 60 the
// world polls an hour a minute, but a key still gets 20 feed requests a
// real minute, as the contract says, and Retry-After is real seconds.
//
// # Faults
//
// Injected faults (POST /_control/faults) act per operation (feed, videos,
// health or *): an error status (a 429 or 503 with Retry-After, default 1
// s, 0 when retryAfter is 0; a 429 is the rate limit's own, rate_limited;
// a named fault edits it as it edits the server's answers:
// retry-after-missing takes its Retry-After), a real delay (≤ MaxFaultDelay, ended early if the client goes), a
// malformed body (cut in half), or a dropped connection; for the next
// count requests, with a probability drawn from an RNG seeded with the
// Seed, or both. They are checked before authentication, like a failing
// gateway. Named faults that break one requirement of the contract on
// purpose are package simulator/mutants, turned on as Layers
// (Config.Layers) that name themselves (Layer.Name, Layer.Fault) for GET
// /_control/info and GET /_control/faults to show.
//
// # Control API
//
// Under ControlPrefix (/_control/), JSON in and out, errors as ErrorBody;
// off (404) with Config.NoControl, behind X-Control-Token with
// Config.ControlToken. GET /_control/ lists the routes, GET
// /_control/openapi.yaml is their OpenAPI document (controlapi.yaml). It is
// safe by default against the browser of someone who runs it: a request
// needs a loopback Host or one of Config.ControlHosts (DNS rebinding gives
// another site's page a Host of its own), no Origin but a listed one (not
// through "*") and no Sec-Fetch-Site of another site, and a body sent as
// application/json (a form or text/plain POST, which a page may send
// without a preflight, is a 415). cmd/simulator refuses to listen beyond
// loopback without a token or --no-control.
//
// Reset puts back the state at New (same world, same seeded keys, clock
// at Start, no faults, an empty journal). GET /_control/world exports the
// world, the accounts and the key hashes (never a key whole, except the
// seeded ones that /_control/info shows too), as they were when it began:
// it streams from a copy, and the world answers and polls meanwhile (one
// export at a time); PUT imports such an export
// and sets the clock to its time, and answers with the keys now valid
// (role and hint); budgets start fresh. An import holds to every bound
// of a world built in memory (importcheck.go). An import is read
// as a stream ("format" first, "world" last, as exported), at most
// Config.MaxImportBytes (a 413 before a byte is read when Content-Length
// says more), one at a time (409); what a refused big import took is
// given back to the system at once.
//
// A recording (tcmkit record, package suites/record) is such an export
// with a "recording" member and no key: its accounts get fresh keys on
// import (from a fresh salt; the same again on a reset of Config.World),
// and /_control/info says where it came from and that it is served in the
// kit's own shape; it lists each seeded key with its role now and its
// hint. Config.World serves an export or a
// recording from the start (a reset goes back to it); Config.Frozen lets
// time pass without polls.
//
// What the world may cost is bounded: a clock advance (at most MaxAdvance)
// runs its polls one poll interval at a time, each under the world's lock
// briefly, so API requests are served meanwhile, and a request itself
// never catches up more than one interval (Server.settle). Past
// Config.MaxEvents events the world stops polling (the clock goes on;
// GET /_control/clock says full, /poll is a 409) until a reset or an
// import. POST /_control/accounts stops at Config.MaxAccounts (409).
//
// # Journal
//
// Every request to the API (not to the control API) is kept in a ring of
// Config.JournalSize entries: method, path and query with keys redacted
// (also percent-encoded ones), the operation, status, ErrorBody.error,
// Retry-After, the key's hint and id (16 hex digits of its SHA-256) and
// account, whether a key was found in the URL, the body sizes, and the
// virtual and real time. GET /_control/requests filters it (key suffix,
// account, operation, method, path, status or class, virtual time, id),
// DELETE clears it; Control.Requests reads it from Go. Config.Observers
// see each exchange whole (headers without Authorization, the body as
// sent, read for them before the handler answers, and the answer) once it
// is answered, with the time on the rate clock, why the Authorization
// header held no key, the keys found elsewhere (by id and hint), the
// injected fault and whether the client gave up.
//
// # Clients
//
// Config.Clients makes a judge of the clients (clients.Judging, package
// simulator/clients; on in tcmkit simulate unless --no-client-judge): New
// hands it the server, and it sees every exchange after the observers and judges each key against the client requirements of
// the catalogue. GET /_control/clients serves its verdicts, GET/POST/DELETE
// /_control/scenarios its scenarios; it starts again on DELETE
// /_control/clients, a reset and an import (clearing the journal keeps the
// verdicts). Its scenarios act through RegenerateKey,
// AddFault and Advance. Package simulator/clienttest puts the two in a
// client's own tests.
//
// # Speed
//
// 200 answers are kept for the moment of the world they show (see
// answerCache). A feed page shows the event log and the accounts, so it is
// kept until an event is recorded or the control API changes an account:
// in a live world the first page, which polling clients ask for again and
// again, is built once per new event. A tracked-videos answer also shows
// Now (stat windows), so it is kept only with the manual clock; in
// realtime mode it is built into a pooled buffer and costs no garbage. An
// answer is kept only if its moment did not move while it was built, so
// a reader never gets an answer older than the world it reads. Feed pages
// cost O(limit + log n) to build (the world's event log); the usual
// tracked-videos body is read without running the schema (plainVideoIDs:
// only a body the schema accepts, with the same ids). Figures are in
// ci/load/README.md.
package simulator
