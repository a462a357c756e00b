package record

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

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

// save writes the progress whole, then renames it into place.
func (ru *run) save() error {
	ru.saved = time.Now()
	b, err := json.Marshal(ru.p)
	if err != nil {
		return err
	}
	return writeAtomic(ru.r.Out+".partial", b, 0o600)
}

// writeAtomic writes a file whole under a temporary name, then renames it:
// a crash leaves the previous file or the new one, never half of one.
func writeAtomic(path string, b []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(mode) // the recording holds no key: others may read it
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func loadProgress(path string) (*progress, error) {
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
