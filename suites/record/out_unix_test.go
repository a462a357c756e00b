//go:build unix

package record

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/outfile/outfiletest"
)

// TestOutIsWrittenNotReplaced: --out at a symbolic link writes the file it
// names and leaves the link; at a FIFO it feeds the reader and stays a
// FIFO; a directory is refused before any request.
func TestOutIsWrittenNotReplaced(t *testing.T) {
	t.Parallel()
	base := recordedAt.UnixMilli()
	srv := feedServer(t, 2, 10, func(n int) string { return renamed("e"+string(rune('a'+n)), base-int64(n)*1000, "t") }, nil)
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real.json"), filepath.Join(dir, "link.json")
	os.Symlink(real, link)
	r := &Recorder{Target: srv.URL, ProKey: hostileKey, Out: link, Clock: &fakeClock{now: recordedAt}}
	if _, err := r.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode().Type() != fs.ModeSymlink {
		t.Errorf("the link is gone or replaced: %v", err)
	}
	if b, err := os.ReadFile(real); err != nil || !strings.Contains(string(b), `"recording"`) {
		t.Errorf("the file the link names: %v", err)
	}

	fifo := filepath.Join(dir, "world.fifo")
	outfiletest.FIFO(t, fifo)
	got := outfiletest.Reader(fifo)
	r.Out = fifo
	if _, err := r.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if !strings.Contains(s, `"recording"`) {
			t.Errorf("the FIFO's reader got %.200q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the FIFO's reader got nothing")
	}
	if fi, _ := os.Lstat(fifo); fi.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the FIFO is now %v", fi.Mode().Type())
	}

	r.Out = dir
	var se *SettingError
	if _, err := r.Run(t.Context()); !errors.As(err, &se) || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("--out a directory: %v", err)
	}
}
