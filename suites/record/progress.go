package record

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/tcmkit/tcmkit/schemas/outfile"
	"github.com/tcmkit/tcmkit/simulator/world"
)

// progressFormat names the layout of the .partial file.
const progressFormat = "tcmkit-record-progress/1"

// walk is one account's feed walk.
type walk struct {
	Plan   world.Plan `json:"plan"`
	Cursor string     `json:"cursor"`
	Pages  int        `json:"pages"`
	Done   bool       `json:"done"`
	// Events are as received, newest first: strings, so that the bytes
	// survive a save and a resume exactly.
	Events []string `json:"events"`
	// KeyInCursor: the server's cursor for the next page holds a key, so
	// Cursor is its redacted form, which the server cannot read: the
	// walk goes on with the cursor itself (raw) in this run, and a resume
	// cannot go on with it.
	KeyInCursor bool   `json:"keyInCursor,omitempty"`
	raw         string // the cursor as the server sent it, this run only
}

// progress is the .partial file: everything seen so far and where each
// walk stands. It holds no key.
type progress struct {
	Format   string   `json:"format"`
	Origin   string   `json:"origin"`
	Walks    []*walk  `json:"walks"`
	Asked    int      `json:"asked"` // video ids asked for, in order
	Entries  []string `json:"entries"`
	Missing  int      `json:"missing"`
	Requests int      `json:"requests"`
	Bytes    int64    `json:"bytes"`
	Now      int64    `json:"now"` // the newest server time seen
	Bounded  string   `json:"bounded,omitempty"`
	// Keys are the hints (redact.Form) of the keys the recording began
	// with, by plan: a resume with another account's key would mix two
	// accounts in one world.
	Keys map[world.Plan]string `json:"keys,omitempty"`
}

// maybeSave saves the progress when saveEvery has passed, and a second
// more for each MiB it holds: a large recording is not written whole at
// every request (at most about two minutes of progress are lost to a
// crash at the largest).
func (ru *run) maybeSave() {
	if time.Since(ru.saved) >= saveEvery+time.Duration(ru.p.Bytes>>20)*time.Second {
		if err := ru.save(); err != nil {
			fmt.Fprintf(ru.log, "record: %v\n", err)
		}
	}
}

// save writes the progress whole, then renames it into place (package
// outfile: a link to it is followed, not replaced).
func (ru *run) save() error {
	ru.saved = time.Now()
	b, err := json.Marshal(ru.p)
	if err != nil {
		return err
	}
	return outfile.Write(context.Background(), ru.r.Out+".partial", b, 0o600)
}

// loadProgress reads the progress of a recording, a regular file (or a
// link to one): a FIFO or a device there is not the recorder's and is not
// read (it might never end).
func loadProgress(path string) (*progress, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not the progress of a recording but a %s: remove it, or name another --out", path, kindOf(fi.Mode()))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p progress
	if err := json.Unmarshal(b, &p); err != nil || p.Format != progressFormat || len(p.Walks) == 0 {
		return nil, fmt.Errorf("%s is not the progress of a recording (remove it to start again)", path)
	}
	return &p, nil
}

// kindOf names a file's kind for a message.
func kindOf(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "block device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "file of kind " + m.Type().String()
}
