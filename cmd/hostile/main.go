// Command hostile serves one of the hostile targets of package
// suites/hostile on the loopback interface, with a second listener that
// must see nothing (the redirecting targets send the suite there), so that
// a run of the conformance suite against it can be watched and measured:
//
//	go run ./cmd/hostile --name huge-body --addr 127.0.0.1:9911 &
//	/usr/bin/time -v /tmp/suite.test --target http://127.0.0.1:9911 --pro-key ... (printed)
//
// It stops on SIGINT or SIGTERM, saying how many requests the other
// listener got (none, if the suite is right).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/tcmkit/tcmkit/cmd/internal/cli"
	"github.com/tcmkit/tcmkit/suites/hostile"
)

const about = `Serves one hostile target of the conformance suite on the loopback
interface: a server that redirects elsewhere, sends bodies of 2 GiB or of
invalid JSON, drips, asks for absurd waits, never ends its cursors, echoes
the key or cuts the connection (--list names them). It prints the suite's
command line, with the keys the target expects, and on SIGINT or SIGTERM how
many requests reached the other listener, where the redirecting targets send
the suite (none, if the suite is right). Loopback addresses only.`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// settings are the command's flags and variables (package schemas/settings).
type settings struct {
	Name string `ff:"placeholder=NAME, long=name, usage='the hostile target to serve (see --list)'"`
	Addr string `ff:"placeholder=ADDR, long=addr, usage='where to listen: a loopback address'"`
	List bool   `ff:"long=list, usage='list the hostile targets and exit'"`
	Size int    `ff:"long=size, usage='length of invalid-json bodies, in bytes: 128 to 268435456 (0: the default)'"`
}

// run serves until stop is closed (nil: until a signal).
func run(args []string, stdout, stderr io.Writer, stop <-chan struct{}) int {
	cmd := cli.Command{Name: "hostile", Usage: "hostile --name NAME [--addr 127.0.0.1:PORT]", About: about, EnvPrefix: "TCM_HOSTILE"}
	s := settings{Addr: "127.0.0.1:0", Size: hostile.DefaultSize}
	if err := cmd.Parse(&s, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "hostile: %v\n", err)
		return 2
	}
	if s.Size != 0 && (s.Size < hostile.MinSize || s.Size > hostile.MaxSize) {
		fmt.Fprintf(stderr, "hostile: --size %d: want %d to %d bytes, or 0 (the default, %d)\n", s.Size, hostile.MinSize, hostile.MaxSize, hostile.DefaultSize)
		return 2
	}
	var caught atomic.Int32
	elsewhere, err := listen("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caught.Add(1)
		fmt.Fprintf(stderr, "hostile: the other listener got %s %s\n", r.Method, r.URL.Path)
	}))
	if err != nil {
		fmt.Fprintf(stderr, "hostile: %v\n", err)
		return 1
	}
	defer elsewhere.Close()
	targets := hostile.Targets("http://"+elsewhere.Addr().String(), s.Size)
	if s.List {
		for _, t := range targets {
			fmt.Fprintf(stdout, "%-26s %s\n", t.Name, t.About)
		}
		return 0
	}
	var chosen *hostile.Target
	for i := range targets {
		if targets[i].Name == s.Name {
			chosen = &targets[i]
		}
	}
	if chosen == nil {
		fmt.Fprintf(stderr, "hostile: unknown --name %q (see --list)\n", s.Name)
		return 2
	}
	if host, _, err := net.SplitHostPort(s.Addr); err != nil || !net.ParseIP(strings.Trim(host, "[]")).IsLoopback() {
		fmt.Fprintf(stderr, "hostile: --addr %s: want a loopback address such as 127.0.0.1:9911\n", s.Addr)
		return 2
	}
	ln, err := listen(s.Addr, chosen.Handler)
	if err != nil {
		fmt.Fprintf(stderr, "hostile: %v\n", err)
		return 1
	}
	defer ln.Close()
	k := hostile.Keys
	fmt.Fprintf(stdout, "%s: %s\n  at http://%s (the other listener at http://%s)\n  suite: --target http://%s --pro-key %s --free-key %s --revoked-key %s\n",
		chosen.Name, chosen.About, ln.Addr(), elsewhere.Addr(), ln.Addr(), k.Pro, k.Free, k.Revoked)
	if stop == nil {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { <-sig; close(done) }()
		stop = done
	}
	<-stop
	fmt.Fprintf(stdout, "the other listener got %d requests\n", caught.Load())
	return 0
}

// listen serves h on addr until the listener is closed.
func listen(addr string, h http.Handler) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	go http.Serve(ln, h)
	return ln, nil
}
