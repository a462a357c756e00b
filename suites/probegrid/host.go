package probegrid

import (
	"context"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/explore"
	"github.com/tcmkit/tcmkit/suites/pace"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// Host is what the probes need of the suite that runs them (package
// conformance): the run's keys, client, pace and clock; the way a spec
// fails, blocks and skips there; and the feed as the suite knows it.
type Host interface {
	Keys() Keys
	Client() *client.Client
	Pace() *pace.Pacer
	// RunContext ends when the run does; the lanes run under it.
	RunContext() context.Context
	Profile() string
	MaxPages() int
	MaxWait() time.Duration
	VirtualClock() bool
	TargetClock() client.Clock
	// RoomIn is how long the key waits for room for n more requests of
	// path ("": of any path) in its window, by what the suite sent on it.
	RoomIn(key, path string, n int) time.Duration
	// Wait waits d, saying why when it is long.
	Wait(ctx context.Context, d time.Duration, why string) error
	// Own tells the contract oracle what a sequence that holds the key
	// knows of its window (oracle.Oracle.Own): until release, the run is
	// its only client, and it has room for room more requests now. The
	// oracle's rules that count the window then judge its answers on any
	// clock.
	Own(key string, room int) (release func())
	Log(line string)
	Redact(s string) string
	// Explore is what the explored requests, sent beside the probes in
	// real time, take of each key's room (none when they are not).
	Explore(roomPro, roomFree int) map[explore.Spend]int
	// StartExplore sends the explored requests beside the probes, when
	// the run does so (quick).
	StartExplore()

	Failf(format string, args ...any)
	Block(cause string)
	// Unable skips (a setting not given: needs(flag)) or blocks the spec
	// for why its probes cannot be sent.
	Unable(why string)
	SkipFor(setting, reason string)
	NoneOf(rule string, problems []string)
	// Needs is why a probe needs a flag the run was not given.
	Needs(flag string) string
	// StatusCause is the requirement an unexpected status breaks, or why
	// the answer cannot be judged.
	StatusCause(resp *client.Response) (catalogue.ID, string)
	// Elsewhere is why an unexpected answer is no finding of own.
	Elsewhere(resp *client.Response, own catalogue.ID) string

	// Fetch is the (possibly shared) answer to req; it fails the spec
	// when the target does not answer.
	Fetch(ctx context.Context, req client.Request) *client.Response
	// Walk is the events of the role's whole walk (the Pro key's at
	// limit=200, the free key's at 199), and whether it reached the end.
	Walk(ctx context.Context, role probe.Role) ([]Event, bool)
	KnownVideoIDs(ctx context.Context, max int) []string
	// Tenant judges a tenant probe's answers against both accounts' whole
	// feeds; ForeignPages is why the key's feed pages among resps are no
	// pages of its own to judge (one shows the other account's event).
	Tenant(ctx context.Context, p probe.Probe, lead, judged []*client.Response) ([]string, string)
	ForeignPages(ctx context.Context, p probe.Probe, resps []*client.Response) string

	// Reading answers and making requests as the suite does.
	PageShape(resp *client.Response) (int, string)
	VideoIDsOf(resp *client.Response) []string
	VideosRequest(ids []string, key string) client.Request
	LimitRequest(limit, key string) client.Request
	PageRequest(limit, cursor, key string) client.Request
	InventedID(n, length int) string
}

// Keys are the run's keys: the three given, the two the probes derive
// (unknown: of no account; malformed: without the prefix), and the rate
// specs' two.
type Keys struct {
	Pro, Free, Revoked string
	Unknown, Malformed string
	Burst, Other       string
}

// Event is what a whole walk shows of one event.
type Event struct {
	ID, Channel, Video string
	CreatedAt          int64
	HasTime            bool
}
