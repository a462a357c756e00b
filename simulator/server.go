package simulator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
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
)

// DefaultStart is the virtual time at start unless Config.Start is set. It
// does not depend on the seed, so two seeds differ only in their data.
var DefaultStart = world.DefaultStart

// Config configures a Server. The zero value is a manual-clock simulator
// with the defaults below.
type Config struct {
	Seed         int64         // same seed and flags: same world, same events, same keys
	Channels     int           // seeded channels (0: DefaultChannels)
	History      time.Duration // back-filled history at start (0: DefaultHistory)
	Start        time.Time     // virtual time at start (zero: DefaultStart)
	Speed        float64       // 0 = manual clock (moves only via control API/Advance); >0 = real time × Speed
	KeyPrefix    string        // "" = DefaultKeyPrefix; letters and digits only
	FeedLimit    int           // feed requests per RateWindow per key (0: schemas.FeedRequestsPerMinute; <0: unlimited)
	VideosLimit  int           // tracked-videos requests per RateWindow per key (0: DefaultVideosLimit; <0: unlimited)
	ControlToken string        // if set, the control API needs header "X-Control-Token: <token>"
	NoControl    bool          // turns the control API off (404)
	EdgeRate     float64       // 0..1, how often generated data hits edge cases
	Middleware   []Middleware  // wraps each operation's handler, first innermost (named faults: package mutants)
	Logger       *slog.Logger  // nil: discard

	// now is the wall clock behind realtime mode; tests replace it.
	now func() time.Time
}

func (c Config) withDefaults() (Config, error) {
	if c.Channels == 0 {
		c.Channels = DefaultChannels
	}
	if c.History == 0 {
		c.History = DefaultHistory
	}
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	if c.FeedLimit == 0 {
		c.FeedLimit = schemas.FeedRequestsPerMinute
	}
	if c.VideosLimit == 0 {
		c.VideosLimit = DefaultVideosLimit
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Channels < 0:
		return c, fmt.Errorf("simulator: channels must be at least 1, got %d", c.Channels)
	case c.History < 0:
		return c, fmt.Errorf("simulator: history must not be negative, got %s", c.History)
	case c.Speed < 0 || math.IsNaN(c.Speed) || math.IsInf(c.Speed, 0):
		return c, fmt.Errorf("simulator: speed must be 0 (manual) or a positive factor, got %v", c.Speed)
	case !(c.EdgeRate >= 0 && c.EdgeRate <= 1):
		return c, fmt.Errorf("simulator: edge rate must be within 0..1, got %v", c.EdgeRate)
	case !alnum(c.KeyPrefix):
		return c, fmt.Errorf("simulator: key prefix must be letters and digits only, got %q", c.KeyPrefix)
	}
	return c, nil
}

func alnum(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
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
	// answers keeps 200 answers; every change to the world made outside
	// AdvanceTo must call answers.Changed.
	answers answerCache
}

// Server is the simulator: the API and the control API on one handler.
type Server struct {
	cfg     Config
	log     *slog.Logger
	clock   *clock
	st      atomic.Pointer[state]
	faults  *faultSet
	handler http.Handler

	// control serializes the control API's changes of state (reset,
	// import, account changes), so that two operators cannot interleave.
	control sync.Mutex
	// keyPattern matches a key of the prefix, wherever it is (redactKeys).
	keyPattern *regexp.Regexp
	// sleep is how an injected delay waits; tests replace it.
	sleep func(ctx context.Context, d time.Duration)

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
		keyPattern: regexp.MustCompile(regexp.QuoteMeta(cfg.KeyPrefix) + "_[A-Za-z0-9]{" + strconv.Itoa(KeyRandomLen) + "}"),
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	st, err := s.freshState()
	if err != nil {
		return nil, err
	}
	s.st.Store(st)
	s.handler = s.routes()
	if s.clock.Manual() {
		close(s.done)
	} else {
		go s.tick()
	}
	return s, nil
}

// freshState builds the world of the Config and its seeded accounts.
func (s *Server) freshState() (*state, error) {
	w, err := world.New(world.Config{Seed: s.cfg.Seed, Channels: s.cfg.Channels, History: s.cfg.History, Start: s.cfg.Start, EdgeRate: s.cfg.EdgeRate})
	if err != nil {
		return nil, fmt.Errorf("simulator: world: %w", err)
	}
	st := &state{
		world:  w,
		keys:   newKeyring(s.cfg.KeyPrefix, s.cfg.Seed),
		feed:   newLimiter(s.cfg.FeedLimit, schemas.RateWindow),
		videos: newLimiter(s.cfg.VideosLimit, schemas.RateWindow),
	}
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
func (s *Server) Advance(d time.Duration) int {
	now := s.clock.Advance(max(d, 0))
	return s.st.Load().world.AdvanceTo(now)
}

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
			if n := s.st.Load().world.AdvanceTo(s.clock.Now()); n > 0 {
				s.log.Debug("polled", "events", n, "now", s.clock.Now())
			}
		}
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
