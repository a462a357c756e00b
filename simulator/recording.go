package simulator

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/simulator/world"
)

// Recording is where a recorded world came from (tcmkit record): the
// "recording" member of an export. A recording stores no key: on import
// its accounts get fresh ones. Its world is served in the kit's own
// conforming shape, whatever the shape of the server it was recorded
// from (its cursors, error vocabulary, key order, limits); Shape says so.
type Recording struct {
	// Origin is the recorded server's scheme://host[:port].
	Origin string `json:"origin"`
	// RecordedAt is the recording's time, epoch ms: the clock starts there.
	RecordedAt int64 `json:"recordedAt"`
	// Requests and Events count what the recording took and kept.
	Requests int `json:"requests"`
	Events   int `json:"events"`
	Videos   int `json:"videos"`
	// Complete is false when a bound (--max-events, --max-requests,
	// --max-bytes, --max-total-wait; Bounded names it) stopped the
	// recording before every feed was walked and every video asked for, or
	// when events the server showed could not be kept (Dropped says which).
	Complete bool `json:"complete"`
	// Bounded is the bound that stopped the recording ("" when none did).
	Bounded string `json:"bounded,omitempty"`
	// Dropped says what the server showed that the recording does not
	// hold, and why: a summary line, then the events, named.
	Dropped []string `json:"dropped,omitempty"`
	// Reshaped counts the events whose bytes the recorder wrote in the
	// kit's shape (key order, escapes, members the contract does not name).
	Reshaped int `json:"reshaped"`
	// Unknown lists what the API did not show, so the recording does not
	// hold it (channels and videos name theirs in their own "unknown").
	Unknown []string `json:"unknown,omitempty"`
	// Shape says how the recording is served.
	Shape string `json:"shape,omitempty"`
}

// RecordingShape is what a served recording says of its shape.
const RecordingShape = "served in the kit's own conforming shape: its cursors, error bodies, key order, limits and pacing are the kit's, not the recorded server's"

// String is the banner line of a served recording.
func (r *Recording) String() string {
	at := time.UnixMilli(r.RecordedAt).UTC().Format(time.RFC3339)
	s := fmt.Sprintf("%s at %s: %d events, %d videos, %d requests", r.Origin, at, r.Events, r.Videos, r.Requests)
	switch {
	case len(r.Dropped) > 0 && r.Bounded != "":
		s += fmt.Sprintf(" (incomplete: %s stopped it, and it dropped events: %s)", r.Bounded, r.Dropped[0])
	case len(r.Dropped) > 0:
		s += fmt.Sprintf(" (incomplete: %s)", r.Dropped[0])
	case r.Bounded != "":
		s += " (incomplete: " + r.Bounded + " stopped it)"
	case !r.Complete:
		s += " (incomplete: a bound stopped it)"
	}
	if r.Reshaped > 0 {
		s += fmt.Sprintf("; %d events re-encoded", r.Reshaped)
	}
	return s + "; " + RecordingShape
}

// recordingKeys gives every account of a recorded world a fresh key, and
// the first Pro account a revoked one before it, and returns the seeded
// keys: the first Pro and the first free account's.
func recordingKeys(keys *keyring, wd *world.World) Keys {
	var k Keys
	for _, a := range wd.Accounts() {
		switch {
		case a.Plan == world.Pro && k.Pro == "":
			k.Revoked = keys.Issue(a.ID)
			k.Pro = keys.Issue(a.ID)
		case a.Plan == world.Free && k.Free == "":
			k.Free = keys.Issue(a.ID)
		default:
			keys.Issue(a.ID)
		}
	}
	return k
}

// startAtWorld serves Config.World from the start: its world, keys and
// time. A reset goes back to it.
func (s *Server) startAtWorld() error {
	s.worldSalt = freshSalt() // a reset gives a recording's accounts the same fresh keys again
	if err := s.importWith(bytes.NewReader(s.cfg.World), s.worldSalt); err != nil {
		return fmt.Errorf("simulator: world: %s", strings.TrimPrefix(err.Error(), "simulator: "))
	}
	s.cfg.Start = s.clock.Now()
	return nil
}

// resetToWorld is Reset with Config.World.
func (s *Server) resetToWorld() error {
	if err := s.importWith(bytes.NewReader(s.cfg.World), s.worldSalt); err != nil {
		return err
	}
	s.faults.Clear()
	s.journal.Clear()
	return nil
}

// ExportFormat is the "format" of GET/PUT /_control/world, which a
// recording (tcmkit record) writes too.
const ExportFormat = exportFormat
