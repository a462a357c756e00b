//go:build unix

// Package outfiletest makes the FIFOs that the tests of a path a user
// names (an info file, a recording, a world) write to or read from.
package outfiletest

import (
	"io"
	"os"
	"syscall"
	"testing"
)

// FIFO makes a FIFO at path; the test is skipped where none can be made.
func FIFO(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
}

// Reader reads the FIFO at path whole, as a script reading it would, once
// a writer opens it: what it read, or the error that opening it met.
func Reader(path string) <-chan string {
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	return got
}
