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
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
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
	"github.com/tcmkit/tcmkit/simulator/clients"
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

// shutdownGrace is how long in-flight requests may take after SIGTERM.
const shutdownGrace = simulator.ShutdownGrace

// options are the command line, after defaults, environment and flags.
type options struct {
	addr       string
	infoFile   string
	logFormat  string
	logLevel   slog.Level
	listFaults bool
	faults     []string // named faults (package mutants)
	tlsCert    string
	tlsKey     string
	probe      bool
	cfg        simulator.Config
	// The clients' judge (package simulator/clients).
	noJudge       bool
	scenario      string
	listScenarios bool
	clientReport  string
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
	fs.StringVar(&o.cfg.ControlToken, "control-token", "", "if set, the control API needs the header X-Control-Token with this value; needed to listen on anything but loopback")
	fs.BoolVar(&o.cfg.NoControl, "no-control", false, "turn the control API off (its paths answer 404)")
	fs.Func("control-host", "a `NAME` the control API answers to besides loopback ones (the Host of a compose service, say); repeatable or comma-separated; * for any", listFlag(&o.cfg.ControlHosts))
	fs.Func("cors", "a web `ORIGIN` (http://localhost:5173) whose pages may call the API from a browser; repeatable or comma-separated; * for any; none by default", listFlag(&o.cfg.CORSOrigins))
	fs.BoolVar(&o.probe, "health-check", false, "ask the simulator listening at --addr for POST /api/public/health and exit 0 if it answers 200 (a container's health check)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (with --tls-key)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	fs.IntVar(&o.cfg.JournalSize, "journal-size", simulator.DefaultJournalSize, "requests kept by the journal (GET /_control/requests); 0: no journal")
	fs.IntVar(&o.cfg.MaxAccounts, "max-accounts", simulator.DefaultMaxAccounts, "accounts the control API may hold")
	fs.IntVar(&o.cfg.MaxEvents, "max-events", simulator.DefaultMaxEvents, "events past which the world stops polling (bounds memory: about 0.9 KB an event)")
	fs.Int64Var(&o.cfg.MaxImportBytes, "max-import-bytes", simulator.DefaultMaxImportBytes, "largest world accepted by PUT /_control/world")
	fs.StringVar(&o.infoFile, "info-file", "", `once listening, write {"url","controlUrl","proKey","freeKey","revokedKey"} to this file`)
	fs.StringVar(&o.clientReport, "client-report", "", "at exit, write the verdicts on the clients to this `DIR`: client-report.{json,md,html,junit.xml}")
	fs.StringVar(&o.scenario, "scenario", "", "arm a client scenario (`NAME`) from the start; see --list-scenarios")
	fs.BoolVar(&o.listScenarios, "list-scenarios", false, "print every client scenario, what it does and what a good client does, and exit")
	fs.BoolVar(&o.noJudge, "no-client-judge", false, "do not judge the clients (GET /_control/clients answers 404): for load tests")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	level := fs.String("log-level", "info", "log level: debug (one line per request), info, warn or error")
	var fz fuzzFlags
	fz.register(fs)
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
	if o.cfg.JournalSize == 0 {
		o.cfg.JournalSize = -1
	}
	if err := fz.apply(&o); err != nil {
		return o, err
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return o, errors.New("--tls-cert and --tls-key go together")
	}
	if o.noJudge && (o.scenario != "" || o.clientReport != "") {
		return o, errors.New("--scenario and --client-report need the client judge (not --no-client-judge)")
	}
	if !o.noJudge {
		j, err := clients.New(clients.Config{Scenario: o.scenario})
		if err != nil {
			return o, fmt.Errorf("invalid value %q for --scenario (see --list-scenarios)", o.scenario)
		}
		o.cfg.Clients = j
	}
	switch {
	case o.cfg.MaxAccounts < 1 || o.cfg.MaxEvents < 1 || o.cfg.MaxImportBytes < 1 || o.cfg.JournalSize < -1:
		return o, errors.New("--max-accounts, --max-events and --max-import-bytes must be at least 1, --journal-size at least 0")
	case o.cfg.Channels < 1:
		return o, fmt.Errorf("invalid value %d for --channels: want at least 1", o.cfg.Channels)
	case o.cfg.History < 0:
		return o, fmt.Errorf("invalid value %s for --history: want 0 or more", o.cfg.History)
	}
	return o, nil
}

// listFlag appends each comma-separated item of a repeatable flag (its
// environment variable is one string: TCM_SIM_CORS="http://a,http://b").
func listFlag(dst *[]string) func(string) error {
	return func(v string) error {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				*dst = append(*dst, item)
			}
		}
		return nil
	}
}

// loopback reports whether a listen address can be reached from this
// machine only: localhost or a loopback IP. An empty host (":8080") is
// every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// exposed is the refusal to serve an open control API beyond loopback.
func exposed(addr string) error {
	return fmt.Errorf("listening on %s, beyond loopback, needs --control-token (TCM_SIM_CONTROL_TOKEN) or --no-control: "+
		"otherwise anyone who reaches the port can read the seeded keys and drive the simulator", addr)
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
	if o.listScenarios {
		printScenarios(stdout)
		return 0
	}
	if o.probe {
		return healthCheck(o, stderr)
	}
	if !loopback(o.addr) && o.cfg.ControlToken == "" && !o.cfg.NoControl {
		fmt.Fprintf(stderr, "simulator: %v\n", exposed(o.addr))
		return 2
	}
	if host, _, err := net.SplitHostPort(o.addr); err == nil && host != "" && !loopback(o.addr) {
		o.cfg.ControlHosts = append(o.cfg.ControlHosts, host) // the address it listens on
	}
	log := newLogger(o, stderr)
	o.cfg.Logger = log
	sim, err := simulator.New(o.cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%v (see --help)\n", err) // the error starts with "simulator:"
		return 2
	}
	defer sim.Close()
	started := time.Now()

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		fmt.Fprintf(stderr, "simulator: %v\n", err)
		return 1
	}
	scheme := "http://"
	if o.tlsCert != "" {
		scheme = "https://"
	}
	info := sim.Info(scheme + ln.Addr().String())
	srv := sim.HTTPServer()
	served := make(chan error, 1)
	go func() {
		if o.tlsCert != "" {
			served <- srv.ServeTLS(ln, o.tlsCert, o.tlsKey)
			return
		}
		served <- srv.Serve(ln)
	}()

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
	keys := []string{info.ProKey, info.FreeKey, info.RevokedKey}
	if !loopback(o.addr) {
		// Beyond loopback (a container), standard output ends up in logs
		// that others read: the keys are for GET /_control/info.
		for i, k := range keys {
			keys[i] = redactKey(k) + " (whole: GET " + strings.TrimSuffix(simulator.ControlPrefix, "/") + "/info)"
		}
	}
	fmt.Fprintf(stdout, "  pro key:     %s\n  free key:    %s\n  revoked key: %s\n", keys[0], keys[1], keys[2])
	fmt.Fprintf(stdout, "  exposure:    %s\n", exposure(o))
	fmt.Fprintf(stdout, "  clients:     %s\n", judging(o, info))
	log.Info("listening", "url", info.URL, "seed", o.cfg.Seed, "speed", o.cfg.Speed)

	code := 0
	select {
	case err := <-served:
		fmt.Fprintf(stderr, "simulator: %v\n", err)
		code = 1
	case <-ctx.Done():
		log.Info("shutting down; finishing in-flight requests", "grace", shutdownGrace)
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			log.Error("shutdown", "err", err)
			code = 1
		}
	}
	if o.clientReport != "" {
		// After the shutdown: every request that was answered is judged.
		if err := writeClientReport(o, sim, info, started, stdout); err != nil {
			fmt.Fprintf(stderr, "simulator: %v\n", err)
			code = 1
		}
	}
	if code == 0 {
		log.Info("stopped")
	}
	return code
}

// healthCheck asks the simulator at o.addr (0.0.0.0 and :: become
// loopback) whether it answers, as a container's health check does.
func healthCheck(o options, stderr io.Writer) int {
	host, port, err := net.SplitHostPort(o.addr)
	if err != nil {
		fmt.Fprintf(stderr, "simulator: --addr %s: %v\n", o.addr, err)
		return 2
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	scheme := "http"
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if o.tlsCert != "" {
		// A liveness probe of our own port: the name in the certificate is
		// not the point.
		scheme, tr.TLSClientConfig = "https", &tls.Config{InsecureSkipVerify: true}
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: tr}
	resp, err := c.Post(scheme+"://"+net.JoinHostPort(host, port)+schemas.PathHealth, "application/json", strings.NewReader("{}"))
	if err != nil {
		fmt.Fprintf(stderr, "simulator: health check: %v\n", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "simulator: health check: status %d\n", resp.StatusCode)
		return 1
	}
	return 0
}

// redactKey is a key's hint: its prefix and last four characters.
func redactKey(k string) string {
	prefix, random, _ := strings.Cut(k, "_")
	if len(random) < 8 {
		return "…"
	}
	return prefix + "_…" + random[len(random)-4:]
}

// exposure says at start who can reach what.
func exposure(o options) string {
	var parts []string
	switch {
	case loopback(o.addr):
		parts = append(parts, "loopback only")
	default:
		parts = append(parts, "reachable beyond this machine")
	}
	switch {
	case o.cfg.NoControl:
		parts = append(parts, "control API off")
	case o.cfg.ControlToken != "":
		parts = append(parts, "control API behind X-Control-Token")
	default:
		parts = append(parts, "control API open to loopback clients")
	}
	if len(o.cfg.CORSOrigins) > 0 {
		parts = append(parts, "browsers allowed from "+strings.Join(o.cfg.CORSOrigins, ", "))
	} else {
		parts = append(parts, "no CORS (--cors ORIGIN for a web page)")
	}
	return strings.Join(parts, "; ")
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
