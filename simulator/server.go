package simulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/settings"
	"github.com/tcmkit/tcmkit/simulator/world"
)

// Defaults of Config.
const (
	// The world's defaults, named once in package world.
	DefaultChannels  = world.DefaultChannels
	DefaultHistory   = world.DefaultHistory
	DefaultKeyPrefix = "tcm"
	// DefaultVideosLimit is the tracked-videos operation's rate limit per key
	// and RateWindow. The spec names no value; we take the feed's, as a
	// separate budget: a videos request does not use up feed requests.
	DefaultVideosLimit = schemas.FeedRequestsPerMinute
	// MaxBodyBytes bounds a request body; a larger body is a 400.
	MaxBodyBytes = 64 << 10
	// DefaultMaxAccounts bounds the accounts POST /_control/accounts may
	// create (each keeps an index of its channels' events).
	DefaultMaxAccounts = 100
	// DefaultMaxEvents bounds the world: past it the clock no longer makes
	// the world poll (about 0.9 KB of memory an event).
	DefaultMaxEvents = 1_000_000
	// DefaultMaxImportBytes bounds a world imported through PUT /_control/world.
	DefaultMaxImportBytes = 256 << 20
	// DefaultJournalSize is how many requests the journal keeps.
	DefaultJournalSize = 1000
)

// DefaultStart is the virtual time at start unless Config.Start is set. It
// does not depend on the seed, so two seeds differ only in their data.
var DefaultStart = world.DefaultStart

// Config configures a Server: the simulator's one settings struct. The
// zero value is a manual-clock simulator with the defaults below
// (Defaults sets them, the one place it is done); the ff tags make each
// setting a flag and a variable of the simulate command (package
// schemas/settings: --feed-limit, TCM_SIM_FEED_LIMIT), whose help shows
// Defaults. New refuses a setting out of its range (Check) before any work.
type Config struct {
	Seed         int64         `ff:"long=seed, usage='seed of the world and the keys: same seed and flags, same world, events and keys'"`
	Channels     int           `ff:"long=channels, usage='seeded channels'"`                                        // 0: DefaultChannels
	History      time.Duration `ff:"long=history, usage='history back-filled at start, so the first page is full'"` // 0: DefaultHistory
	Start        time.Time     // virtual time at start (zero: DefaultStart; the command's --start, see StartFlag)
	Speed        float64       `ff:"long=speed, usage='virtual time per real time (60: an hour of polling a minute); 0: manual clock (POST /_control/clock/advance)'"`
	KeyPrefix    string        `ff:"long=key-prefix, usage='prefix of the API keys (<prefix>_<random>)'"`                                            // "": DefaultKeyPrefix; letters and digits only
	FeedLimit    int           `ff:"long=feed-limit, usage='feed requests a minute per key (virtual minutes with the manual clock); -1: unlimited'"` // 0: schemas.FeedRequestsPerMinute
	VideosLimit  int           `ff:"long=videos-limit, usage='tracked-videos requests a minute per key, a budget apart; -1: unlimited'"`             // 0: DefaultVideosLimit
	ControlToken string        `ff:"placeholder=TOKEN, long=control-token, usage='the control API wants header X-Control-Token with this value; needed beyond loopback'"`
	NoControl    bool          `ff:"long=no-control, usage='turn the control API off (its paths answer 404)'"`
	EdgeRate     float64       `ff:"long=edge-rate, usage='0..1: how often generated data hits edge cases (null counts, emoji, long ids)'"`
	Layers       []Layer       // change the operations' answers, first innermost: named faults, a conforming draw, a fuzz schedule (layer.go)
	Logger       *slog.Logger  // nil: discard

	// ControlHosts are the host names (or addresses) the control API
	// answers to besides loopback ones (localhost, 127.0.0.0/8, ::1); any
	// other Host header is a 403, which is what defeats DNS rebinding. "*"
	// accepts any Host. A port in a name is ignored.
	ControlHosts settings.List `ff:"placeholder=HOST, long=control-host, usage='a host name the control API answers to besides loopback (a compose service); * for any'"`
	// CORSOrigins are the web origins (scheme://host[:port]) allowed to call
	// the API from a browser: preflights are answered and answers carry
	// Access-Control-Allow-Origin. "*" allows any origin. None: no CORS.
	// An origin listed here (not through "*") may also call the control API.
	CORSOrigins settings.List `ff:"placeholder=ORIGIN, long=cors, usage='a web origin (http://localhost:5173) whose pages may call the API; * for any'"`

	MaxAccounts    int   `ff:"long=max-accounts, usage='accounts the control API may hold'"`                                       // 0: DefaultMaxAccounts
	MaxEvents      int   `ff:"long=max-events, usage='events past which the world stops polling (about 0.9 KB an event)'"`         // 0: DefaultMaxEvents
	MaxImportBytes int64 `ff:"long=max-import-bytes, usage='largest world accepted by PUT /_control/world (and exported by GET)'"` // 0: DefaultMaxImportBytes
	JournalSize    int   `ff:"long=journal-size, usage='requests kept by the journal (GET /_control/requests); -1: no journal'"`   // 0: DefaultJournalSize
	// Observers see every exchange of the API (not of the control API)
	// once it is answered, in the request's goroutine, and change nothing
	// (a test's recorder). See Exchange.
	Observers []Observer
	// Clients makes the judge of the clients that talk to the server
	// (clients.Judging, package simulator/clients): New calls it once and
	// hands it the server, as it hands itself to a Layer's Wrap, so the
	// judge has its server from the start and nothing is set later. The
	// judge sees every exchange after the Observers, serves GET
	// /_control/clients and the scenarios, and starts again on DELETE
	// /_control/clients, a reset or an import; Server.Clients returns it.
	// Nil: no judge, and those routes answer 404.
	Clients func(*Server) (ClientJudge, error)
	// World is an export or a recording (tcmkit record) served instead of
	// the seeded world: the clock starts at its time, and a reset goes
	// back to it. Frozen stops the world polling: time passes, nothing new
	// happens (a recording served as it was recorded).
	World  []byte
	Frozen bool

	// now is the wall clock behind realtime mode; tests replace it.
	now func() time.Time
}

func (c Config) withDefaults() (Config, error) {
	c = c.Defaults()
	return c, c.Check()
}

func alnum(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	for _, c := range []byte(s) {
		if !isKeyChar(c) {
			return false
		}
	}
	return true
}

// state is everything a reset or an import replaces at once.
type state struct {
	world  *world.World
	keys   *keyring
	feed   *limiter
	videos *limiter
	seeded Keys
	// feedPages and answers keep 200 answers of the feed and of tracked
	// videos (see answerCache). Every change to the world that is not an
	// event and that an answer shows (a plan, an account, the edge rate)
	// must call changed.
	feedPages answerCache
	// cursorPages keep the pages asked for with a cursor: such a page
	// holds events older than the cursor's, which a new event does not
	// change, so it is kept until the control API changes something
	// (cursorMoment), also in a live world.
	cursorPages answerCache
	answers     answerCache
	changes     atomic.Uint64
	// full is set once the world holds Config.MaxEvents events: from then
	// on the clock moves but the world no longer polls.
	full atomic.Bool
	// recording is where a recorded world came from, nil for others.
	recording *Recording
}

// Server is the simulator: the API and the control API on one handler.
type Server struct {
	cfg     Config
	log     *slog.Logger
	clock   *clock
	date    dateHeader
	st      atomic.Pointer[state]
	faults  *faultSet
	handler http.Handler // serveRequest

	api        map[string]*apiRoute // apiTable by path
	observing  atomic.Int64         // API requests begun whose observers have not run yet (see Settle)
	order      observeOrder         // observers see answered requests in arrival order
	apiPaths   string               // the API's paths, for a 404
	controlMux http.Handler         // the control API's routes (control_routes.go); nil with NoControl

	// control serializes the control API's changes of state (reset,
	// import, account changes), so that two operators cannot interleave.
	control sync.Mutex
	// keyPattern matches a key of the prefix, wherever it is (redactKeys);
	// keyMarker is the prefix and its underscore, which every key holds.
	keyPattern *regexp.Regexp
	keyMarker  string
	// sleep is how an injected delay waits; tests replace it.
	sleep func(ctx context.Context, d time.Duration)
	// tokenTries slows failed tries of the control token.
	tokenTries tokenBackoff
	// tokenRed redacts the control token (and any piece of it, in any
	// encoding the kit's redactor reads) from what a client sent, as the
	// journal and the log keep it: a token put in a URL by mistake; nil
	// without a token.
	tokenRed *redact.Redactor

	cors      corsPolicy
	journal   *journal      // nil: none
	observers []Observer    // Config.Observers, then the judge's
	judge     ClientJudge   // made by Config.Clients; nil: none
	exchanges atomic.Uint64 // ids of the exchanges observers see when there is no journal
	arrival   sync.Mutex    // an id and its arrival time are taken together (arrive)
	// realtimeVideos builds tracked-videos answers as in a live world
	// (no answer cache) on a manual clock too: tests compare answers.
	realtimeVideos bool
	// importing admits one import at a time; advancing one clock advance;
	// exporting one export (and its copy of the world).
	importing sync.Mutex
	advancing sync.Mutex
	exporting sync.Mutex
	// worldSalt makes the fresh keys of Config.World's accounts when it is
	// a recording: the same on every reset.
	worldSalt *[32]byte

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// New builds a seeded world and its accounts: a Pro account, a free
// account, and a third (Pro) account whose first key was regenerated, so
// that the first key is the Revoked one.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:        cfg,
		log:        cfg.Logger,
		clock:      newClock(cfg.Start, cfg.Speed, cfg.now),
		faults:     newFaultSet(cfg.Seed),
		sleep:      sleepContext,
		keyMarker:  cfg.KeyPrefix + "_",
		keyPattern: regexp.MustCompile(regexp.QuoteMeta(cfg.KeyPrefix) + "_[A-Za-z0-9]{" + strconv.Itoa(KeyRandomLen) + "}"),
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
		cors:       newCORSPolicy(cfg.CORSOrigins),
		journal:    newJournal(cfg.JournalSize, cfg.KeyPrefix),
	}
	if cfg.ControlToken != "" {
		s.tokenRed = redact.New(cfg.ControlToken)
	}
	st, err := s.freshState()
	if err != nil {
		return nil, err
	}
	s.st.Store(st)
	s.checkFull(st)
	if len(cfg.World) > 0 {
		if err := s.startAtWorld(); err != nil {
			return nil, err
		}
	}
	s.observers = slices.Clone(cfg.Observers)
	if cfg.Clients != nil {
		if s.judge, err = cfg.Clients(s); err != nil {
			return nil, fmt.Errorf("simulator: client judge: %w", err)
		}
	}
	if s.judge != nil {
		s.observers = append(s.observers, s.judge.Observe)
	}
	s.routes()
	if s.clock.Manual() {
		close(s.done)
	} else {
		go s.tick()
	}
	return s, nil
}

// newState is the state of a world and its keys, with fresh rate-limit
// budgets and no kept answer.
func (s *Server) newState(w *world.World, keys *keyring) *state {
	st := &state{
		world:  w,
		keys:   keys,
		feed:   newLimiter(s.cfg.FeedLimit, schemas.RateWindow),
		videos: newLimiter(s.cfg.VideosLimit, schemas.RateWindow),
	}
	// Pages after a cursor are kept across events, for long: when full,
	// the cache makes room for the new ones. It holds about a whole feed
	// (the world's event bytes, beyond the usual bound): random deep
	// cursors of a big world, 57 MB of pages, were built afresh half the
	// time from a cache of 32 MB.
	st.cursorPages.evict = true
	st.cursorPages.room = func() int { return maxCacheBytes + int(w.EventBytes()) }
	return st
}

// freshState builds the world of the Config and its seeded accounts.
func (s *Server) freshState() (*state, error) {
	w, err := world.New(world.Config{Seed: s.cfg.Seed, Channels: s.cfg.Channels, History: s.cfg.History, Start: s.cfg.Start, EdgeRate: s.cfg.EdgeRate})
	if err != nil {
		return nil, fmt.Errorf("simulator: world: %w", err)
	}
	if s.cfg.Frozen {
		w.Freeze()
	}
	st := s.newState(w, newKeyring(s.cfg.KeyPrefix, keyGen{seed: s.cfg.Seed}))
	// The seeded Pro and free accounts track overlapping sets of channels,
	// neither inside the other (every channel i with i%3 != 2, and every
	// one with i%3 != 0), so tenant isolation shows without setup.
	pro := w.CreateAccountTracking(world.Pro, func(i int) bool { return i%3 != 2 })
	free := w.CreateAccountTracking(world.Free, func(i int) bool { return i%3 != 0 })
	third := w.CreateAccount(world.Pro)
	st.seeded.Pro = st.keys.Issue(pro.ID)
	st.seeded.Free = st.keys.Issue(free.ID)
	st.seeded.Revoked = st.keys.Issue(third.ID)
	st.keys.Issue(third.ID)
	return st, nil
}

// Handler serves the API and, unless NoControl, the control API under /_control/.
func (s *Server) Handler() http.Handler { return s.handler }

// Seeded returns the whole keys of the seeded accounts.
func (s *Server) Seeded() Keys { return s.st.Load().seeded }

// Now is the current virtual time.
func (s *Server) Now() time.Time { return s.clock.Now() }

// Advance moves the virtual clock forward by d (negative d is ignored) and
// runs the polls that became due. It returns the number of events made.
// See catchUp for how it stays out of the way of API requests.
func (s *Server) Advance(d time.Duration) int {
	n, _ := s.advance(context.Background(), d)
	return n
}

// advance is Advance on behalf of a request: it stops between two steps
// once ctx is done or the server is closed, and says why.
func (s *Server) advance(ctx context.Context, d time.Duration) (int, error) {
	s.advancing.Lock()
	defer s.advancing.Unlock()
	n := 0
	for d = s.clampAdvance(max(d, 0)); ; {
		step := min(d, advanceStep)
		d -= step
		n += s.catchUp(s.clock.Advance(step))
		if d == 0 {
			return n, nil
		}
		if err := s.stopped(ctx); err != nil {
			return n, err
		}
	}
}

// stopped is why work on behalf of a request or of the poller should stop
// now: the request is gone, or the server is closing.
func (s *Server) stopped(ctx context.Context) error {
	select {
	case <-s.stop:
		return errClosed
	default:
		return ctx.Err()
	}
}

var errClosed = errors.New("the simulator is closing")

// Close stops the realtime poller. The handler stays usable.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { close(s.stop) })
	<-s.done
	return nil
}

// tickEvery is how often, in real time, the realtime poller catches the
// world up with the clock. Requests also catch it up before they read.
const tickEvery = 200 * time.Millisecond

func (s *Server) tick() {
	defer close(s.done)
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if n := s.catchUp(s.clock.Now()); n > 0 {
				s.log.Debug("polled", "events", n, "now", s.clock.Now())
			}
		}
	}
}

// advanceStep is how far the world moves under its lock at a time.
const advanceStep = schemas.PollInterval

// catchUp moves the world up to virtual time t one advanceStep at a time,
// so that the world's lock is never held for long: an API request waits
// for one step's polls at most, however far the clock jumps. It stops
// when the world holds Config.MaxEvents events (the state is then full).
func (s *Server) catchUp(t time.Time) int {
	st := s.st.Load()
	n := 0
	for !st.full.Load() && s.stopped(context.Background()) == nil {
		next := st.world.Now().Add(advanceStep)
		if !next.Before(t) {
			n += st.world.AdvanceTo(t)
			s.checkFull(st)
			return n
		}
		n += st.world.AdvanceTo(next)
		s.checkFull(st)
	}
	return n
}

// changed invalidates every kept answer.
func (st *state) changed() { st.changes.Add(1) }

// feedMoment is the moment of a feed page: the log's length and the
// changes (see answerCache).
func (st *state) feedMoment() cacheMoment {
	return cacheMoment{version: int64(st.world.Stats().Events), changes: st.changes.Load()}
}

// cursorMoment is the moment of a feed page asked for with a cursor: the
// changes only. The log only grows at its newest end and a recorded event
// never changes, so the page after a cursor, and its nextCursor, stay
// the same as events are recorded.
func (st *state) cursorMoment() cacheMoment {
	return cacheMoment{changes: st.changes.Load()}
}

// videosMoment is the moment of a tracked-videos answer: Now and the
// changes.
func (st *state) videosMoment() cacheMoment {
	return cacheMoment{version: st.world.Now().UnixMilli(), changes: st.changes.Load()}
}

func (s *Server) checkFull(st *state) {
	if st.world.Stats().Events >= s.cfg.MaxEvents && st.full.CompareAndSwap(false, true) {
		s.log.Warn("the world is full: it no longer polls (reset, or start with a smaller --history or fewer --channels)", "events", s.cfg.MaxEvents)
	}
}

// settle brings the world up to the clock before a request reads it,
// unless that is more than one step away: then the request reads the
// world as it is, a moment behind, while the poller or the advance in
// progress catches it up.
func (s *Server) settle(st *state) {
	if st.full.Load() {
		return
	}
	now := s.clock.Now()
	if now.Sub(st.world.Now()) <= advanceStep {
		st.world.AdvanceTo(now)
	}
}

func sleepContext(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

var _ io.Closer = (*Server)(nil)

// RateNow is the time rate-limit windows and Retry-After count on (see
// Exchange.RateTime).
func (s *Server) RateNow() time.Time { return s.clock.RateNow() }

// RegenerateKey gives an account a new key and revokes its old one at
// once, as POST /_control/accounts/{id}/key does.
func (s *Server) RegenerateKey(accountID string) (string, error) {
	s.control.Lock()
	defer s.control.Unlock()
	st := s.st.Load()
	if _, ok := st.world.Account(accountID); !ok {
		return "", world.ErrNoAccount
	}
	if st.keys.keyCount() >= MaxKeys {
		return "", errTooManyKeys
	}
	key := st.keys.Issue(accountID)
	s.log.Info("key regenerated; the previous key is revoked", "account", accountID, "key", hint(key))
	return key, nil
}

// AddFault injects a fault, as POST /_control/faults does, and returns
// it with its id.
func (s *Server) AddFault(spec FaultSpec) (FaultSpec, error) {
	if err := spec.check(); err != nil {
		return spec, fmt.Errorf("invalid fault: %w", err)
	}
	if len(s.faults.List()) >= MaxFaults {
		return spec, errTooManyFaults
	}
	spec = s.faults.Add(spec)
	s.log.Info("fault added", "fault", spec.ID, "operation", spec.Operation, "status", spec.Status)
	return spec, nil
}

// Clients is the judge Config.Clients made, nil if none.
func (s *Server) Clients() ClientJudge { return s.judge }

func (s *Server) resetJudge() {
	if s.judge != nil {
		s.judge.Reset()
		// Said in the log, which a client cannot erase: a seed loop
		// (ci/fuzz-seeds.sh) fails a client that erased its verdicts.
		s.log.Info("client verdicts cleared")
	}
}
