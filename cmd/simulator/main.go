// Command simulator serves the Tracked-Channel Monitoring API from a seeded,
// evolving world on 127.0.0.1, for client developers and for the
// conformance suite. It prints the base URL, the seeded keys and the
// control URL; --info-file writes them as JSON once the port is listening.
//
// Every flag has an environment variable (TCM_SIM_ and the flag's name in
// upper case, - as _; see package cmd/internal/cli).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tcmkit/tcmkit/cmd/internal/cli"
	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/mutants"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// command is the binary, as its help describes it.
var command = cli.Command{
	Name:      "simulator",
	Usage:     "simulator [flags]",
	About:     "Serves the Tracked-Channel Monitoring API from a seeded, evolving world, with a control API under /_control/.",
	EnvPrefix: "TCM_SIM",
}

// shutdownGrace is how long in-flight requests may take after SIGTERM; it
// is longer than the longest injected delay.
const shutdownGrace = simulator.MaxFaultDelay + 5*time.Second

// options are the command line, after defaults, environment and flags.
type options struct {
	addr       string
	infoFile   string
	logFormat  string
	logLevel   slog.Level
	listFaults bool
	faults     []string // named faults (package mutants)
	cfg        simulator.Config
}

// parseOptions fills options from defaults < environment < flags set. It
// returns flag.ErrHelp after printing the help to stdout.
func parseOptions(args []string, stdout io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("simulator", flag.ContinueOnError)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address; 127.0.0.1:0 picks a free port")
	seed := fs.Int64("seed", 1, "seed of the world and the keys: same seed and flags, same world, same events, same keys")
	speed := fs.Float64("speed", 1, "virtual time per real time (60: an hour of polling per minute); 0: manual clock, moved only by POST /_control/clock/advance")
	fs.DurationVar(&o.cfg.History, "history", simulator.DefaultHistory, "history back-filled at start, so the first page is full (0: the default)")
	fs.IntVar(&o.cfg.Channels, "channels", simulator.DefaultChannels, "seeded channels")
	start := fs.String("start", simulator.DefaultStart.Format(time.RFC3339), "virtual time at start (RFC 3339)")
	fs.StringVar(&o.cfg.KeyPrefix, "key-prefix", simulator.DefaultKeyPrefix, "prefix of the API keys (<prefix>_<random>)")
	feedLimit := fs.Int("feed-limit", schemas.FeedRequestsPerMinute, "feed requests per minute per key (virtual minutes with a manual clock, real ones otherwise); 0: unlimited (for load tests)")
	videosLimit := fs.Int("videos-limit", simulator.DefaultVideosLimit, "tracked-videos requests per minute per key, a budget apart from the feed's; 0: unlimited")
	fs.Float64Var(&o.cfg.EdgeRate, "edge-rate", 0, "0..1: how often generated data hits edge cases (null counts, emoji, 32-character ids)")
	faults := fs.String("faults", "", "comma-separated named faults that break the contract on purpose (see --list-faults)")
	fs.Func("fault", "a named fault (`NAME`) that breaks one requirement on purpose; repeatable (see --list-faults)", func(v string) error {
		o.faults = append(o.faults, strings.TrimSpace(v))
		return nil
	})
	fs.BoolVar(&o.listFaults, "list-faults", false, "print every named fault with the requirement it breaks, and exit")
	fs.StringVar(&o.cfg.ControlToken, "control-token", "", "if set, the control API needs the header X-Control-Token with this value")
	fs.BoolVar(&o.cfg.NoControl, "no-control", false, "turn the control API off (its paths answer 404)")
	fs.StringVar(&o.infoFile, "info-file", "", `once listening, write {"url","controlUrl","proKey","freeKey","revokedKey"} to this file`)
	fs.StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	level := fs.String("log-level", "info", "log level: debug (one line per request), info, warn or error")
	if err := command.Parse(fs, args, stdout); err != nil {
		return o, err
	}

	o.cfg.Seed, o.cfg.Speed = *seed, *speed
	var err error
	if o.cfg.Start, err = time.Parse(time.RFC3339, *start); err != nil {
		return o, fmt.Errorf("invalid value %q for --start: want RFC 3339, such as 2026-01-01T00:00:00Z", *start)
	}
	if o.cfg.FeedLimit, err = limit("feed-limit", *feedLimit); err != nil {
		return o, err
	}
	if o.cfg.VideosLimit, err = limit("videos-limit", *videosLimit); err != nil {
		return o, err
	}
	if *faults != "" {
		o.faults = append(o.faults, strings.Split(*faults, ",")...)
	}
	if len(o.faults) > 0 {
		m, err := mutants.Middleware(o.faults...)
		if err != nil {
			return o, err
		}
		o.cfg.Middleware = []simulator.Middleware{m}
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		return o, fmt.Errorf("invalid value %q for --log-format: want text or json", o.logFormat)
	}
	if err := o.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return o, fmt.Errorf("invalid value %q for --log-level: want debug, info, warn or error", *level)
	}
	switch {
	case o.cfg.Channels < 1:
		return o, fmt.Errorf("invalid value %d for --channels: want at least 1", o.cfg.Channels)
	case o.cfg.History < 0:
		return o, fmt.Errorf("invalid value %s for --history: want 0 or more", o.cfg.History)
	}
	return o, nil
}

// limit maps the flag's 0 (unlimited) to the Config's negative.
func limit(name string, n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("invalid value %d for --%s: want 0 (unlimited) or more", n, name)
	case n == 0:
		return -1, nil
	}
	return n, nil
}

// printFaults lists the named faults as a table: name, the requirement of
// the catalogue it breaks, and what it does.
func printFaults(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tBREAKS\tWHAT IT DOES")
	for _, name := range mutants.Names() {
		m, _ := mutants.Lookup(name)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, m.Requirement, m.Does)
	}
	tw.Flush()
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "simulator: %v (see --help)\n", err)
		return 2
	}
	if o.listFaults {
		printFaults(stdout)
		return 0
	}
	log := newLogger(o, stderr)
	o.cfg.Logger = log
	sim, err := simulator.New(o.cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%v (see --help)\n", err) // the error starts with "simulator:"
		return 2
	}
	defer sim.Close()

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		fmt.Fprintf(stderr, "simulator: %v\n", err)
		return 1
	}
	info := sim.Info("http://" + ln.Addr().String())
	handler := sim.Handler()
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      shutdownGrace + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	if o.infoFile != "" {
		if err := writeInfo(o.infoFile, info); err != nil {
			fmt.Fprintf(stderr, "simulator: %v\n", err)
			_ = srv.Close()
			return 1
		}
	}
	mode := "manual clock (POST " + info.ControlURL + "/clock/advance)"
	if o.cfg.Speed > 0 {
		mode = "real time × " + strconv.FormatFloat(o.cfg.Speed, 'g', -1, 64)
	}
	fmt.Fprintf(stdout, "Tracked-Channel Monitoring API simulator, seed %d, %s\n", o.cfg.Seed, mode)
	fmt.Fprintf(stdout, "  url:         %s\n", info.URL)
	if info.ControlURL != "" {
		fmt.Fprintf(stdout, "  control:     %s\n", info.ControlURL)
	}
	fmt.Fprintf(stdout, "  pro key:     %s\n  free key:    %s\n  revoked key: %s\n", info.ProKey, info.FreeKey, info.RevokedKey)
	log.Info("listening", "url", info.URL, "seed", o.cfg.Seed, "speed", o.cfg.Speed)

	select {
	case err := <-served:
		fmt.Fprintf(stderr, "simulator: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	log.Info("shutting down; finishing in-flight requests", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

func newLogger(o options, w io.Writer) *slog.Logger {
	hopts := &slog.HandlerOptions{Level: o.logLevel}
	if o.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, hopts))
	}
	return slog.New(slog.NewTextHandler(w, hopts))
}

// writeInfo writes the info file whole or not at all (a rename), so a
// script polling for it never reads half of it.
func writeInfo(path string, info simulator.Info) error {
	info.Now = 0
	raw, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".simulator-info-*")
	if err != nil {
		return fmt.Errorf("info file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("info file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("info file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("info file: %w", err)
	}
	return nil
}
