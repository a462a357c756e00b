package simulator

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator/world"
)

// Upper bounds of the settings: what the simulator can do in memory and
// time. A setting past its bound is refused by New (and by the command,
// exit 2) before any work, with the range in the message.
const (
	// MaxRateLimit bounds FeedLimit and VideosLimit: a key's grants are
	// logged one by one (8 bytes each); -1 is the way to have no limit.
	MaxRateLimit = 10_000
	// MaxJournalSize bounds JournalSize: the ring is made at start.
	MaxJournalSize = 100_000
	// MaxEventsBound bounds MaxEvents (about 0.9 KB of memory an event).
	MaxEventsBound = 10_000_000
	// MaxImportBytesBound bounds MaxImportBytes.
	MaxImportBytesBound = 4 << 30
	// MaxSpeed bounds Speed: a day of polling in under a second of real
	// time; the realtime poller catches up a tick's worth at a time.
	MaxSpeed = 100_000
)

// Defaults is c with every setting left zero set to its default: the one
// place the simulator's defaults are set (New applies it; the simulate
// command shows it in its help and applies it to what it parsed).
func (c Config) Defaults() Config {
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
	if c.MaxAccounts == 0 {
		c.MaxAccounts = DefaultMaxAccounts
	}
	if c.MaxEvents == 0 {
		c.MaxEvents = DefaultMaxEvents
	}
	if c.MaxImportBytes == 0 {
		c.MaxImportBytes = DefaultMaxImportBytes
	}
	if c.JournalSize == 0 {
		c.JournalSize = DefaultJournalSize
	}
	return c
}

// intRange is one integer setting and its range; off is the value that
// turns it off or makes it unlimited (-1), or 0 when none does.
type intRange struct {
	flag, field string
	v, min, max int64
	off         string // what -1 means, "" when -1 is out of range
}

func (r intRange) check() error {
	if r.v >= r.min && r.v <= r.max || (r.off != "" && r.v == -1) {
		return nil
	}
	want := strconv.FormatInt(r.min, 10) + ".." + strconv.FormatInt(r.max, 10)
	if r.off != "" {
		want = "-1 (" + r.off + ") or " + want
	}
	return fmt.Errorf("simulator: --%s (Config.%s) %d is out of range: want %s (0 is the default)", r.flag, r.field, r.v, want)
}

// Check says whether every setting of c, once defaulted, is within what
// the simulator can do; the error names the setting and its range.
func (c Config) Check() error {
	for _, r := range []intRange{
		{"channels", "Channels", int64(c.Channels), 1, world.MaxChannels, ""},
		{"feed-limit", "FeedLimit", int64(c.FeedLimit), 1, MaxRateLimit, "unlimited"},
		{"videos-limit", "VideosLimit", int64(c.VideosLimit), 1, MaxRateLimit, "unlimited"},
		{"journal-size", "JournalSize", int64(c.JournalSize), 1, MaxJournalSize, "no journal"},
		{"max-accounts", "MaxAccounts", int64(c.MaxAccounts), 1, MaxKeys, ""},
		{"max-events", "MaxEvents", int64(c.MaxEvents), 1, MaxEventsBound, ""},
		{"max-import-bytes", "MaxImportBytes", c.MaxImportBytes, 1, MaxImportBytesBound, ""},
	} {
		if err := r.check(); err != nil {
			return err
		}
	}
	for _, o := range c.CORSOrigins {
		if err := checkOrigin(o); err != nil {
			return fmt.Errorf("simulator: CORS origin %q: %w", o, err)
		}
	}
	switch {
	case c.History < 0 || c.History > world.MaxHistory:
		return fmt.Errorf("simulator: --history (Config.History) %s is out of range: want 0..%s", c.History, world.MaxHistory)
	case c.Speed < 0 || c.Speed > MaxSpeed || math.IsNaN(c.Speed):
		return fmt.Errorf("simulator: --speed (Config.Speed) %v is out of range: want 0 (manual clock) or a factor up to %d", c.Speed, MaxSpeed)
	case !(c.EdgeRate >= 0 && c.EdgeRate <= 1):
		return fmt.Errorf("simulator: --edge-rate (Config.EdgeRate) %v is out of range: want 0..1", c.EdgeRate)
	case !alnum(c.KeyPrefix):
		return fmt.Errorf("simulator: --key-prefix (Config.KeyPrefix) %q: want 1 to 16 letters and digits", c.KeyPrefix)
	}
	if err := checkStart(c.Start, c.History); err != nil {
		return err
	}
	return checkControlAccess(c)
}

// checkStart keeps the world's first time (Start - History) and Start
// within the times an export holds (world.MinTime..world.MaxTime), so that
// what the simulator starts, it can export and import again.
func checkStart(start time.Time, history time.Duration) error {
	first := world.MinTime + history.Milliseconds()
	if ms := start.UnixMilli(); start.Before(time.UnixMilli(first)) || ms > world.MaxTime {
		return fmt.Errorf("simulator: --start (Config.Start) %s is out of range: want %s..%s (the history, %s, must begin in 1970 or later)",
			start.UTC().Format(time.RFC3339), time.UnixMilli(first).UTC().Format(time.RFC3339), world.MaxTimeText, history)
	}
	return nil
}
