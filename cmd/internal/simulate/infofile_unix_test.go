//go:build unix

package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/outfile/outfiletest"
)

// TestInfoFileIsWrittenNotReplaced: --info-file at a FIFO feeds its reader
// and stays a FIFO; at a symbolic link, the file it names gets the info
// and the link stays; at a device (a full one of our own), the run fails
// as writing to it does and the node stays a device, holding no key.
func TestInfoFileIsWrittenNotReplaced(t *testing.T) {
	dir := t.TempDir()
	serve := func(path string) (code chan int, cancel context.CancelFunc, stderr *bytes.Buffer) {
		ctx, cancel := context.WithCancel(context.Background())
		code, stderr = make(chan int, 1), &bytes.Buffer{}
		go func() {
			code <- run(ctx, []string{"--addr", "127.0.0.1:0", "--speed", "0", "--channels", "2", "--history", "24h", "--info-file", path}, io.Discard, stderr)
		}()
		return code, cancel, stderr
	}
	typeOf := func(path string) fs.FileMode {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Type()
	}

	fifo := filepath.Join(dir, "info.fifo")
	outfiletest.FIFO(t, fifo)
	code, cancel, stderr := serve(fifo)
	got := outfiletest.Reader(fifo)
	var info map[string]any
	select {
	case b := <-got:
		if json.Unmarshal([]byte(b), &info) != nil || info["proKey"] == nil {
			t.Errorf("the FIFO's reader got %q", b)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the FIFO's reader got nothing; stderr: %s", stderr)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit %d: %s", c, stderr)
	}
	if typeOf(fifo) != fs.ModeNamedPipe {
		t.Errorf("the FIFO is now %v", typeOf(fifo))
	}

	real := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	os.Symlink(real, link)
	code, cancel, stderr = serve(link)
	for range 400 {
		if b, err := os.ReadFile(real); err == nil && json.Unmarshal(b, &info) == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	cancel()
	if c := <-code; c != 0 || typeOf(link) != fs.ModeSymlink || info["url"] == nil {
		t.Errorf("a link: exit %d, now %v, the file it names: %v; %s", c, typeOf(link), info, stderr)
	}

	full := filepath.Join(dir, "full")
	if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
		t.Log("no device node of our own (not root):", err)
		return
	}
	code, cancel, stderr = serve(full)
	defer cancel()
	select {
	case c := <-code:
		if c != 1 || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("the full device: exit %d, %s", c, stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("writing to the full device did not fail")
	}
	if typeOf(full) != fs.ModeDevice|fs.ModeCharDevice {
		t.Errorf("the device node is now %v", typeOf(full))
	}
}
