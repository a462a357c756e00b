package world

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// MinTime and MaxTime bound every time of a world, in epoch milliseconds:
// from 1970-01-01 to the end of the year 9999, the times an RFC 3339
// timestamp spells and the clock's arithmetic (milliseconds, nanosecond
// durations added to them) keeps without overflow. An import holding a
// time beyond them is refused; so is an advance of the clock past them.
const (
	MinTime int64 = 0
	MaxTime int64 = 253402300799999 // 9999-12-31T23:59:59.999Z
)

// MaxTimeText is MaxTime as an RFC 3339 timestamp, for messages.
var MaxTimeText = time.UnixMilli(MaxTime).UTC().Format(time.RFC3339Nano)

// TimeInRange reports whether ms is within MinTime..MaxTime.
func TimeInRange(ms int64) bool { return ms >= MinTime && ms <= MaxTime }

// timeError names a time out of range.
func timeError(what string, ms int64) error {
	return fmt.Errorf("%s %d is out of range: times are epoch milliseconds from %d to %d (%s)", what, ms, MinTime, MaxTime, MaxTimeText)
}

// importLimits checks that every time of a snapshot is within range
// before any arithmetic is done with it (the events' times are checked
// as they are read).
func (s *snapshot) importLimits() error {
	for _, t := range []struct {
		what string
		ms   int64
	}{{"now", s.Now}, {"config.start", s.Config.Start}} {
		if !TimeInRange(t.ms) {
			return timeError(t.what, t.ms)
		}
	}
	if s.Tick < MinTime/tickMs || s.Tick > MaxTime/tickMs+1 {
		return timeError("tick (×"+fmt.Sprint(tickMs)+" ms)", s.Tick)
	}
	for i, c := range s.Channels {
		if c != nil && !TimeInRange(c.LastPoll) {
			return timeError(fmt.Sprintf("channel %d: lastPoll", i), c.LastPoll)
		}
	}
	for i, v := range s.Videos {
		if v == nil {
			continue
		}
		for _, t := range []struct {
			what string
			ms   int64
		}{{"publishedAt", v.PublishedAt}, {"firstSeenAt", v.FirstSeenAt}, {"lastPoll", v.LastPoll}, {"sampleTime", v.ST}} {
			if !TimeInRange(t.ms) {
				return timeError(fmt.Sprintf("video %d: %s", i, t.what), t.ms)
			}
		}
	}
	return nil
}

// ImportPrefix reads a world written by Export, as Import does, from the
// start of r, and returns what follows it unread: the caller that embeds
// an export in a document of its own checks the rest.
func ImportPrefix(r io.Reader) (*World, io.Reader, error) {
	w, rest, err := importFrom(r)
	if err != nil {
		return nil, nil, fmt.Errorf("world: import: %w", err)
	}
	return w, rest, nil
}

// errTrailing is an import with data after the world.
var errTrailing = errors.New("data after the end of the world's JSON")

// onlySpace reads r to its end and says whether it held only JSON
// whitespace (up to the first other byte).
func onlySpace(r io.Reader) error {
	br := bufio.NewReader(r)
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return errTrailing
		}
	}
}

// short cuts a string of an import that an error quotes: an export may be
// hundreds of megabytes, an error message is not.
func short(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
