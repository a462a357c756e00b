// Package simulate is the simulate command (tcmkit simulate, and the
// simulator binary of cmd/simulator): it serves the Tracked-Channel
// Monitoring API from a seeded, evolving world on 127.0.0.1, for client
// developers and for the conformance suite. It prints the base URL, the
// seeded keys and the control URL; --info-file writes them as JSON once the
// port is listening.
//
// Every flag has an environment variable (TCM_SIM_ and the flag's name in
// upper case, - as _), in the dialect of package schemas/settings.
package simulate

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
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tcmkit/tcmkit/cmd/internal/cli"
	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clients"
	"github.com/tcmkit/tcmkit/simulator/mutants"
	"github.com/tcmkit/tcmkit/simulator/variant"
)

// About is what the command does, for its help and the kit's list of
// commands.
const About = "Serves the Tracked-Channel Monitoring API from a seeded, evolving world, with a control API under /_control/."

// command is the command, as its help describes it; Name and Usage are
// the caller's.
func command(name string) cli.Command {
	return cli.Command{
		Name:  name,
		Usage: name + " [flags]",
		About: About + "\nIt prints the URL, the seeded keys and the control URL (--info-file: as JSON).",
		Notes: `Zero for a count, a limit or a duration is its default; -1 is unlimited (--feed-limit,
--videos-limit) or off (--journal-size). --speed 0 is the manual clock.
Exit status: 0 after SIGINT or SIGTERM, 1 if serving failed (or the client report could not be
written), 2 for a bad setting. With --client-report, the verdict on the clients: 0 every client
passed, 3 a client failed, 4 no client judged (none sent a request, or keys past the judge's bound).`,
		EnvPrefix: "TCM_SIM",
	}
}

// shutdownGrace is how long in-flight requests may take after SIGTERM.
const shutdownGrace = simulator.ShutdownGrace

// Settings are the command's flags and variables (package schemas/settings).
type Settings struct {
	Addr           string        `ff:"placeholder=ADDR, long=addr, usage='listen address; 127.0.0.1:0 picks a free port'"`
	Seed           int64         `ff:"long=seed, usage='seed of the world and the keys: same seed and flags, same world, events and keys'"`
	Speed          float64       `ff:"long=speed, usage='virtual time per real time (60: an hour of polling a minute); 0: manual clock (POST /_control/clock/advance)'"`
	History        time.Duration `ff:"long=history, usage='history back-filled at start, so the first page is full'"`
	Channels       int           `ff:"long=channels, usage='seeded channels'"`
	Start          cli.Time      `ff:"long=start, usage='virtual time at start'"`
	KeyPrefix      string        `ff:"long=key-prefix, usage='prefix of the API keys (<prefix>_<random>)'"`
	FeedLimit      int           `ff:"long=feed-limit, usage='feed requests a minute per key (virtual minutes with the manual clock); -1: unlimited'"`
	VideosLimit    int           `ff:"long=videos-limit, usage='tracked-videos requests a minute per key, a budget apart; -1: unlimited'"`
	EdgeRate       float64       `ff:"long=edge-rate, usage='0..1: how often generated data hits edge cases (null counts, emoji, long ids)'"`
	Fault          cli.List      `ff:"long=fault, usage='named fault that breaks one requirement on purpose; repeatable, comma-separated'"`
	Faults         cli.List      `ff:"long=faults, usage='the same as --fault'"`
	ListFaults     bool          `ff:"long=list-faults, usage='print every named fault with the requirement it breaks, and exit'"`
	ControlToken   string        `ff:"placeholder=TOKEN, long=control-token, usage='the control API wants header X-Control-Token with this value; needed beyond loopback'"`
	NoControl      bool          `ff:"long=no-control, usage='turn the control API off (its paths answer 404)'"`
	ControlHost    cli.List      `ff:"placeholder=HOST, long=control-host, usage='a host name the control API answers to besides loopback (a compose service); * for any'"`
	CORS           cli.List      `ff:"placeholder=ORIGIN, long=cors, usage='a web origin (http://localhost:5173) whose pages may call the API; * for any'"`
	HealthCheck    bool          `ff:"long=health-check, usage='ask the simulator at --addr for POST /api/public/health; exit 0 on 200 (a container check)'"`
	TLSCert        string        `ff:"placeholder=FILE, long=tls-cert, usage='serve HTTPS with this PEM certificate (with --tls-key)'"`
	TLSKey         string        `ff:"placeholder=FILE, long=tls-key, usage='the PEM private key of --tls-cert'"`
	JournalSize    int           `ff:"long=journal-size, usage='requests kept by the journal (GET /_control/requests); -1: no journal'"`
	MaxAccounts    int           `ff:"long=max-accounts, usage='accounts the control API may hold'"`
	MaxEvents      int           `ff:"long=max-events, usage='events past which the world stops polling (about 0.9 KB an event)'"`
	MaxImportBytes int64         `ff:"long=max-import-bytes, usage='largest world accepted by PUT /_control/world'"`
	InfoFile       string        `ff:"placeholder=FILE, long=info-file, usage='once listening, write {url,controlUrl,proKey,freeKey,revokedKey} to this file'"`
	ClientReport   string        `ff:"placeholder=DIR, long=client-report, usage='at exit, write the verdicts on the clients to this directory; exit 3 if a client failed, 4 if none was judged'"`
	Scenario       string        `ff:"placeholder=NAME, long=scenario, usage='arm a client scenario from the start (see --list-scenarios)'"`
	ListScenarios  bool          `ff:"long=list-scenarios, usage='print every client scenario and what a good client does, and exit'"`
	NoClientJudge  bool          `ff:"long=no-client-judge, usage='do not judge the clients (GET /_control/clients: 404): for load tests'"`
	LogFormat      string        `ff:"long=log-format, usage='log format on stderr: text or json'"`
	LogLevel       string        `ff:"long=log-level, usage='log level: debug (a line a request), info, warn or error'"`
	// A conforming server drawn from a number (package simulator/variant).
	ConformingDraw string `ff:"placeholder=N, long=conforming-draw, usage='serve the conforming server drawn from N (0 or more): every choice the contract leaves open drawn (world, error codes, layout, cursors, framing, precedence, rate accounting, Retry-After, health, titles); N:heavy makes every heavy choice (300-character Unicode titles, channel events in VideoEntries, hourly samples, extra members); it sets the world and the limits; the banner lists it'"`
	// The fuzz schedule (package simulator/fuzz, ci/fuzz-seeds.sh).
	FuzzSeed string `ff:"placeholder=N, long=fuzz-seed, usage='serve the fuzz schedule of seed N: a world at the edges of the contract (in place of --seed, --channels, --history, --edge-rate), 429s, 5xx, slow and cut answers, a key revoked mid-walk; N:break also breaks the contract; GET /_control/fuzz says what was served'"`
}

// Defaults are the settings before the environment and the flags.
func Defaults() Settings {
	return Settings{
		Addr:           "127.0.0.1:8080",
		Seed:           1,
		Speed:          1,
		History:        simulator.DefaultHistory,
		Channels:       simulator.DefaultChannels,
		Start:          cli.Time{Time: simulator.DefaultStart},
		KeyPrefix:      simulator.DefaultKeyPrefix,
		FeedLimit:      schemas.FeedRequestsPerMinute,
		VideosLimit:    simulator.DefaultVideosLimit,
		JournalSize:    simulator.DefaultJournalSize,
		MaxAccounts:    simulator.DefaultMaxAccounts,
		MaxEvents:      simulator.DefaultMaxEvents,
		MaxImportBytes: simulator.DefaultMaxImportBytes,
		LogFormat:      "text",
		LogLevel:       "info",
	}
}

// options are the settings as the command uses them.
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
	draw          *variant.Draw // --conforming-draw
}

// parseOptions fills options from defaults < environment < flags set, as
// the command named name. It returns flag.ErrHelp after printing the help
// to stdout.
func parseOptions(name string, args []string, stdout io.Writer) (options, error) {
	s := Defaults()
	if err := command(name).Parse(&s, args, stdout); err != nil {
		return options{}, err
	}
	return s.options()
}

// options checks the settings and turns them into the command's options and
// the simulator's Config. Zero is the default: the Config's zero is too.
func (s Settings) options() (options, error) {
	o := options{addr: s.Addr, infoFile: s.InfoFile, logFormat: s.LogFormat, listFaults: s.ListFaults,
		faults: append(s.Fault, s.Faults...), tlsCert: s.TLSCert, tlsKey: s.TLSKey, probe: s.HealthCheck,
		noJudge: s.NoClientJudge, scenario: s.Scenario, listScenarios: s.ListScenarios, clientReport: s.ClientReport}
	d := Defaults()
	o.cfg = simulator.Config{
		Seed: s.Seed, Speed: s.Speed, History: s.History, Channels: s.Channels, Start: s.Start.Time,
		KeyPrefix: s.KeyPrefix, FeedLimit: orDefault(s.FeedLimit, d.FeedLimit), VideosLimit: orDefault(s.VideosLimit, d.VideosLimit),
		EdgeRate: s.EdgeRate, ControlToken: s.ControlToken, NoControl: s.NoControl,
		ControlHosts: s.ControlHost, CORSOrigins: s.CORS, JournalSize: s.JournalSize,
		MaxAccounts: s.MaxAccounts, MaxEvents: s.MaxEvents, MaxImportBytes: s.MaxImportBytes,
	}
	for _, n := range []struct {
		name string
		v    int64
		min  int64
	}{
		{"feed-limit", int64(s.FeedLimit), -1}, {"videos-limit", int64(s.VideosLimit), -1}, {"journal-size", int64(s.JournalSize), -1},
		{"channels", int64(s.Channels), 0}, {"max-accounts", int64(s.MaxAccounts), 0}, {"max-events", int64(s.MaxEvents), 0},
		{"max-import-bytes", s.MaxImportBytes, 0}, {"history", int64(s.History), 0},
	} {
		if n.v < n.min {
			unlimited := ""
			if n.min < 0 {
				unlimited = ", -1 (none)"
			}
			return o, fmt.Errorf("invalid value %v for --%s: want 0 (the default)%s or more", n.v, n.name, unlimited)
		}
	}
	if s.ConformingDraw != "" {
		num, heavy := strings.CutSuffix(strings.TrimSpace(s.ConformingDraw), ":heavy")
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			return o, fmt.Errorf("invalid value %q for --conforming-draw: want a whole number of 0 or more, or N:heavy", s.ConformingDraw)
		}
		d := variant.New(n)
		if heavy {
			d = d.Heavy()
		}
		o.draw = &d
	}
	if len(o.faults) > 0 {
		m, err := mutants.Middleware(o.faults...)
		if err != nil {
			return o, err
		}
		o.cfg.Middleware = []simulator.Middleware{m}
		for _, name := range o.faults {
			o.cfg.NamedFaults = append(o.cfg.NamedFaults, strings.TrimSpace(name))
		}
	}
	if err := s.applyFuzz(&o.cfg); err != nil {
		return o, err
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		return o, fmt.Errorf("invalid value %q for --log-format: want text or json", o.logFormat)
	}
	if err := o.logLevel.UnmarshalText([]byte(s.LogLevel)); err != nil {
		return o, fmt.Errorf("invalid value %q for --log-level: want debug, info, warn or error", s.LogLevel)
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
	return o, nil
}

// orDefault is n, or def when n is 0 (the default).
func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
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

// Run is the command named name ("tcmkit simulate", "simulator") without
// the process: it serves until ctx is done and returns the exit status.
func Run(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(name, args, stdout)
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
	var drawn *variant.Binding
	if o.draw != nil {
		drawn = o.draw.Apply(&o.cfg)
	}
	sim, err := simulator.New(o.cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%v (see --help)\n", err) // the error starts with "simulator:"
		return 2
	}
	if drawn != nil {
		drawn.Bind(sim)
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
			keys[i] = redact.Form(k) + " (whole: GET " + strings.TrimSuffix(simulator.ControlPrefix, "/") + "/info)"
		}
	}
	fmt.Fprintf(stdout, "  pro key:     %s\n  free key:    %s\n  revoked key: %s\n", keys[0], keys[1], keys[2])
	fmt.Fprintf(stdout, "  exposure:    %s\n", exposure(o))
	fmt.Fprintf(stdout, "  clients:     %s\n", judging(o, info))
	if len(o.cfg.NamedFaults) > 0 {
		fmt.Fprintf(stdout, "  faults:      %s\n", namedFaults(o.cfg.NamedFaults))
	}
	if o.draw != nil {
		fmt.Fprint(stdout, "  "+strings.ReplaceAll(strings.TrimSuffix(o.draw.String(), "\n"), "\n", "\n  ")+"\n")
	}
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
		// The exit status says the verdict (clients.ExitStatus: 3 a
		// client failed, 4 no client judged), unless serving failed.
		outcome, err := writeClientReport(o, info, started, stdout)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "simulator: %v\n", err)
			code = 1
		case code == 0:
			code = clients.ExitStatus(outcome)
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

// namedFaults says at start which named faults are on, and what each
// breaks: this simulator does not conform, on purpose.
func namedFaults(names []string) string {
	parts := make([]string, len(names))
	for i, name := range names {
		m, _ := mutants.Lookup(name)
		parts[i] = name + " (breaks " + string(m.Requirement) + ")"
	}
	return strings.Join(parts, ", ") + ": it breaks the contract on purpose"
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
