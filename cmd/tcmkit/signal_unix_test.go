//go:build unix

package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary be tcmkit itself: with TCMKIT_TEST_MAIN=1
// it runs main, so that a test can start the real process and signal it.
func TestMain(m *testing.M) {
	if os.Getenv("TCMKIT_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// child is tcmkit running as a process, its output kept.
type child struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	code           int
}

func start(t *testing.T, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), "TCMKIT_TEST_MAIN=1")
	c.cmd.Stdout, c.cmd.Stderr = c.stdout, c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		c.cmd.Wait()
		c.code = c.cmd.ProcessState.ExitCode()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// waitFor waits until ok holds, at most d.
func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
	}
}

// stops sends sig and wants the process gone within a few seconds, with
// the exit status code.
func (c *child) stops(t *testing.T, sig syscall.Signal, code int) {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	const grace = 5 * time.Second
	select {
	case <-c.done:
	case <-time.After(grace):
		c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("%v: still running %s after %v (killed); stderr:\n%.2000s", c.cmd.Args[1:], grace, sig, c.stderr.String())
	}
	if c.code != code {
		t.Errorf("%v: exit %d after %v, want %d; stderr:\n%.2000s", c.cmd.Args[1:], c.code, sig, code, c.stderr.String())
	}
}

// Each long job of tcmkit runs as a process and is stopped with SIGINT or
// SIGTERM at the moment where it works longest: fixtures writing, the
// simulator building a large world or waiting for a world that does not
// come, a recording waiting out a Retry-After, the suite waiting for a
// target that does not answer.

// TestFixturesStopWhenAsked stops fixtures while they write, to stdout or
// to files.
func TestFixturesStopWhenAsked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Run("fixtures to stdout", func(t *testing.T) {
		t.Parallel()
		c := start(t, "fixtures", "--count", "10000", "--invalid")
		waitFor(t, 10*time.Second, "the first documents", func() bool { return c.stdout.Len() > 0 })
		c.stops(t, syscall.SIGINT, 1)
		if !strings.Contains(c.stderr.String(), "stopped (interrupt signal received)") {
			t.Errorf("stderr does not say it stopped: %q", c.stderr.String())
		}
	})
	t.Run("fixtures to files", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		c := start(t, "fixtures", "--walks", "--invalid", "--count", "10000", "--out", dir)
		waitFor(t, 10*time.Second, "the first files", func() bool {
			m, _ := filepath.Glob(filepath.Join(dir, "invalid", "*", "*.json"))
			return len(m) > 0
		})
		c.stops(t, syscall.SIGTERM, 1)
	})
}

// TestSimulateStopsWhenAsked stops the simulator while it builds a large
// world, waits for a world or for the reader of its info file, and serves.
func TestSimulateStopsWhenAsked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Run("simulate building a large world", func(t *testing.T) {
		t.Parallel()
		c := start(t, "simulate", "--addr", "127.0.0.1:0", "--speed", "0", "--channels", "10000", "--history", "8784h")
		c.busy(t, 200*time.Millisecond) // building the world, past the start of main
		c.stops(t, syscall.SIGTERM, 0)
		if strings.Contains(c.stdout.String(), "url:") {
			t.Error("the world was built before the signal: this proves nothing")
		}
	})
	t.Run("simulate waiting for a world from a FIFO", func(t *testing.T) {
		t.Parallel()
		fifo := filepath.Join(t.TempDir(), "world.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("no FIFO here:", err)
		}
		c := start(t, "simulate", "--addr", "127.0.0.1:0", "--world", fifo)
		// Once it opened the FIFO to read, a writer may open it: one that
		// writes nothing leaves it waiting for the world.
		var w *os.File
		waitFor(t, 20*time.Second, "the reader of the FIFO", func() bool {
			f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			w = f
			return err == nil
		})
		defer w.Close()
		c.stops(t, syscall.SIGINT, 0)
	})
	t.Run("simulate waiting for the reader of its info file", func(t *testing.T) {
		t.Parallel()
		fifo := filepath.Join(t.TempDir(), "info.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("no FIFO here:", err)
		}
		addr := freeAddr(t)
		c := start(t, "simulate", "--addr", addr, "--speed", "0", "--channels", "2", "--history", "24h", "--info-file", fifo)
		// It listens, then waits for a reader of the FIFO.
		waitFor(t, 20*time.Second, "the listener", func() bool {
			conn, err := net.Dial("tcp", addr)
			if err == nil {
				conn.Close()
			}
			return err == nil
		})
		time.Sleep(100 * time.Millisecond)
		c.stops(t, syscall.SIGTERM, 0)
		if !strings.Contains(c.stderr.String(), "before the info file was read") {
			t.Errorf("it does not say what it was waiting for: %q", c.stderr.String())
		}
	})
	t.Run("simulate serving", func(t *testing.T) {
		t.Parallel()
		c := start(t, "simulate", "--addr", "127.0.0.1:0", "--speed", "0")
		waitFor(t, 20*time.Second, "the banner", func() bool { return strings.Contains(c.stdout.String(), "revoked key:") })
		c.stops(t, syscall.SIGTERM, 0)
	})
}

// TestRecordStopsWhenAsked stops a recording waiting for the reader of its
// output, and one waiting out a Retry-After.
func TestRecordStopsWhenAsked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Run("record waiting for the reader of its recording", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Path == "/api/public/videos" {
				w.Write([]byte(`{"videos":[],"missingVideoIds":[]}`))
				return
			}
			w.Write([]byte(`{"events":[{"id":"e1","createdAt":1767225600000,"type":"channel_renamed","channel":{"id":"c","platformChannelId":"UC","title":"t","thumbnailUrl":null},"oldChannelTitle":"a","newChannelTitle":"b"}],"nextCursor":null}`))
		}))
		defer srv.Close()
		fifo := filepath.Join(t.TempDir(), "world.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("no FIFO here:", err)
		}
		c := start(t, "record", "--target", srv.URL, "--pro-key", "tcm_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", "--out", fifo)
		waitFor(t, 10*time.Second, "the last page", func() bool { return strings.Contains(c.stderr.String(), "page 1 done") })
		time.Sleep(200 * time.Millisecond)
		c.stops(t, syscall.SIGINT, 1)
	})
	t.Run("record waiting out a Retry-After", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "300")
			w.WriteHeader(http.StatusTooManyRequests)
		}))
		defer srv.Close()
		out := filepath.Join(t.TempDir(), "w.json")
		c := start(t, "record", "--target", srv.URL, "--pro-key", "tcm_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", "--out", out)
		waitFor(t, 10*time.Second, "the wait", func() bool { return strings.Contains(c.stderr.String(), "waiting") })
		c.stops(t, syscall.SIGINT, 1)
		if !strings.Contains(c.stderr.String(), "partial") {
			t.Errorf("it does not say where its progress is: %q", c.stderr.String())
		}
	})
}

// TestConformStopsWhenAsked stops the suite waiting for a target that
// never answers, on SIGINT and on SIGHUP.
func TestConformStopsWhenAsked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP} {
		t.Run("conform against a target that never answers, "+sig.String(), func(t *testing.T) {
			t.Parallel()
			conformStops(t, sig)
		})
	}
}

// conformStops starts conform against a target that never answers and
// stops it with sig (SIGHUP: the terminal closed) once a request came:
// the run is incomplete, and its reports are written.
func conformStops(t *testing.T, sig syscall.Signal) {
	addr, accepted := silentTarget(t)
	reports := t.TempDir()
	c := start(t, "conform", "--target", "http://"+addr, "--pro-key", "tcm_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
		"--report-dir", reports, "--no-color")
	select {
	case <-accepted:
	case <-time.After(20 * time.Second):
		t.Fatalf("no request came; stderr:\n%s", c.stderr.String())
	}
	c.stops(t, sig, 3) // incomplete: an interrupted run never passes nor fails
	if _, err := os.Stat(filepath.Join(reports, "conformance-report.json")); err != nil {
		t.Errorf("after %v: no report: %v", sig, err)
	}
}

// silentTarget listens on 127.0.0.1 and holds every connection open,
// never answering, until the test ends; accepted says a connection came.
func silentTarget(t *testing.T) (addr string, accepted <-chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	came := make(chan struct{}, 1)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn) // held open, never answered
			mu.Unlock()
			select {
			case came <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String(), came
}

// busy waits until the process has used cpu of processor time: it is at
// its work, past the runtime's start (where a signal still kills it).
// Where /proc is not, it waits a second instead.
func (c *child) busy(t *testing.T, cpu time.Duration) {
	t.Helper()
	stat := fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid)
	if _, err := os.Stat(stat); err != nil {
		time.Sleep(time.Second)
		return
	}
	waitFor(t, 30*time.Second, "the work", func() bool {
		b, err := os.ReadFile(stat)
		if err != nil {
			return false
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 {
			return false
		}
		user, _ := strconv.Atoi(f[11]) // utime and stime, fields 14 and 15, in ticks of 10 ms
		sys, _ := strconv.Atoi(f[12])
		return time.Duration(user+sys)*10*time.Millisecond >= cpu
	})
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuffer is a bytes.Buffer that a process writes while a test reads;
// it keeps the first MiB and counts the rest.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	n  int
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n += len(p)
	if room := 1<<20 - s.b.Len(); room > 0 {
		s.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
