//go:build unix

package outfile

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/outfile/outfiletest"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func kind(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Type()
}

// TestRegularFiles: a new file and a regular one are written whole and
// renamed into place, the mode never looser than the file's; a file of two
// names is written in place, so both names still show one file.
func TestRegularFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "info.json")
	if err := Write(t.Context(), p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "one" {
		t.Errorf("got %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if err := Write(t.Context(), p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); read(t, p) != "two" || fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced: %q, mode %v (want 0600: never looser)", read(t, p), fi.Mode().Perm())
	}
	other := filepath.Join(dir, "other-name")
	if err := os.Link(p, other); err != nil {
		t.Skip("no hard links here:", err)
	}
	if err := Write(t.Context(), p, []byte("three"), 0o600); err != nil {
		t.Fatal(err)
	}
	if read(t, other) != "three" {
		t.Errorf("the other name of the file shows %q: the file was replaced, not written", read(t, other))
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// TestSymbolicLinks: a link is followed, never replaced: the file it names
// gets the bytes (made, when it names nothing yet).
func TestSymbolicLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	os.WriteFile(real, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(t.Context(), link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if kind(t, link) != fs.ModeSymlink || read(t, real) != "new" {
		t.Errorf("link now %v, its file %q", kind(t, link), read(t, real))
	}
	dangling := filepath.Join(dir, "to-nothing.json")
	made := filepath.Join(dir, "made.json")
	os.Symlink(made, dangling)
	if err := Write(t.Context(), dangling, []byte("made"), 0o644); err != nil {
		t.Fatal(err)
	}
	if kind(t, dangling) != fs.ModeSymlink || read(t, made) != "made" {
		t.Errorf("a link to nothing: now %v, its file %q", kind(t, dangling), read(t, made))
	}
}

// TestFIFO: a FIFO is written through to its reader and stays a FIFO; with
// no reader, the writer waits until its context ends, then says so.
func TestFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "info.fifo")
	outfiletest.FIFO(t, fifo)
	got := outfiletest.Reader(fifo)
	big := strings.Repeat("x", 1<<20) // more than a pipe holds: the writer waits for the reader
	if err := Write(t.Context(), fifo, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != big {
		t.Errorf("the reader got %d bytes, want %d", len(s), len(big))
	}
	if kind(t, fifo) != fs.ModeNamedPipe {
		t.Fatalf("the FIFO is now %v", kind(t, fifo))
	}
	if err := Check(fifo); err != nil {
		t.Errorf("Check: %v", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := Write(ctx, fifo, []byte("{}"), 0o600)
	if err == nil || !strings.Contains(err.Error(), "no reader came") || time.Since(start) > 5*time.Second {
		t.Errorf("no reader: %v after %s", err, time.Since(start))
	}
	if kind(t, fifo) != fs.ModeNamedPipe {
		t.Errorf("the FIFO is now %v", kind(t, fifo))
	}
}

// TestDevices: a character device is written through and stays one: the
// null device takes the bytes, a full one fails as writing to it does
// (it is not replaced by a file holding them); a block device, a directory
// and a socket are refused.
func TestDevices(t *testing.T) {
	if err := Write(t.Context(), os.DevNull, []byte("{}"), 0o600); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
	if kind(t, os.DevNull) != fs.ModeDevice|fs.ModeCharDevice {
		t.Fatalf("%s is now %v", os.DevNull, kind(t, os.DevNull))
	}
	dir := t.TempDir()
	// Nodes of our own, so that a regression replaces no device of the
	// machine: the full device (1, 7) and a loop device (7, 0).
	full := filepath.Join(dir, "full")
	if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7); err == nil {
		err := Write(t.Context(), full, []byte(`{"proKey":"tcm_x"}`), 0o600)
		if err == nil || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("the full device: %v", err)
		}
		if kind(t, full) != fs.ModeDevice|fs.ModeCharDevice {
			t.Errorf("the full device is now %v", kind(t, full))
		}
		block := filepath.Join(dir, "block")
		if err := syscall.Mknod(block, syscall.S_IFBLK|0o600, 7<<8); err == nil {
			if err := Write(t.Context(), block, []byte("{}"), 0o600); err == nil || !strings.Contains(err.Error(), "block device") {
				t.Errorf("a block device: %v", err)
			}
			if kind(t, block) != fs.ModeDevice {
				t.Errorf("the block device is now %v", kind(t, block))
			}
		}
	} else {
		t.Log("no device nodes of our own (not root):", err)
	}
	if err := Write(t.Context(), dir, []byte("{}"), 0o600); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	sock := filepath.Join(dir, "s.sock")
	if ln, err := net.Listen("unix", sock); err == nil {
		defer ln.Close()
		if err := Write(t.Context(), sock, []byte("{}"), 0o600); err == nil || !strings.Contains(err.Error(), "socket") {
			t.Errorf("a socket: %v", err)
		}
		if err := Check(sock); err == nil {
			t.Error("Check takes a socket")
		}
	}
}

// TestCheck: a missing directory is made, one that cannot be is said.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	if err := Check(filepath.Join(dir, "new", "info.json")); err != nil {
		t.Error(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "new")); err != nil || !fi.IsDir() {
		t.Errorf("the directory was not made: %v", err)
	}
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, nil, 0o600)
	if err := Check(filepath.Join(file, "info.json")); err == nil {
		t.Error("a path under a file passes")
	}
	if err := Check(dir); err == nil {
		t.Error("a directory passes")
	}
	// A link to nothing: its target is made when written, so its
	// directory must be there, and writable.
	ok, gone := filepath.Join(dir, "ok-link"), filepath.Join(dir, "gone-link")
	os.Symlink("made-later.json", ok)
	os.Symlink(filepath.Join(dir, "no-such-dir", "w.json"), gone)
	if err := Check(ok); err != nil {
		t.Errorf("a link to a file to make, in a directory that is there: %v", err)
	}
	if err := Check(gone); err == nil || !strings.Contains(err.Error(), "cannot be made") {
		t.Errorf("a link into a directory that is not there: %v, want it refused before any work", err)
	}
	if err := Write(context.Background(), ok, []byte("x"), 0o644); err != nil {
		t.Errorf("writing through the link Check passed: %v", err)
	}
}
