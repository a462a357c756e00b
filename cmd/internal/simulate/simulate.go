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
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/peterbourgon/ff/v4"

	"github.com/tcmkit/tcmkit/cmd/internal/cli"
	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/outfile"
	"github.com/tcmkit/tcmkit/schemas/settings"
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
		Notes: `Zero for a count, a limit or a duration is its default; -1 is unlimited or off. --speed 0 is the manual clock.
Exit status: 0 after SIGINT or SIGTERM, 1 if serving failed (or the client report could not be written),
2 for a bad setting; with --client-report, 3 a client failed, 4 no client judged (none sent a request).`,
		EnvPrefix: "TCM_SIM",
	}
}

// shutdownGrace is how long in-flight requests may take after SIGTERM.
const shutdownGrace = simulator.ShutdownGrace

// Settings are the command's flags and variables (package
// schemas/settings): the simulator's own settings are the ff-tagged fields
// of Sim (simulator.Config, the one settings struct of the simulator,
// defaulted by Config.Defaults), and these fields the command's.
type Settings struct {
	Sim simulator.Config // --seed, --speed, --feed-limit, ... (their tags are on simulator.Config)

	Addr          string   `ff:"placeholder=ADDR, long=addr, usage='listen address; 127.0.0.1:0 picks a free port'"`
	Fault         cli.List `ff:"long=fault, usage='named fault that breaks one requirement on purpose; repeatable, comma-separated'"`
	Faults        cli.List `ff:"long=faults, usage='the same as --fault'"`
	ListFaults    bool     `ff:"long=list-faults, usage='print every named fault with the requirement it breaks, and exit'"`
	HealthCheck   bool     `ff:"long=health-check, usage='ask the simulator at --addr for POST /api/public/health; exit 0 on 200 (a container check)'"`
	TLSCert       string   `ff:"placeholder=FILE, long=tls-cert, usage='serve HTTPS with this PEM certificate (with --tls-key)'"`
	TLSKey        string   `ff:"placeholder=FILE, long=tls-key, usage='the PEM private key of --tls-cert'"`
	InfoFile      string   `ff:"placeholder=FILE, long=info-file, usage='once listening, write {url,controlUrl,proKey,freeKey,revokedKey,keys} to this file (keys: each with its role and hint)'"`
	ClientReport  string   `ff:"placeholder=DIR, long=client-report, usage='at exit, write the verdicts on the clients to this directory; exit 3 if a client failed, 4 if none was judged'"`
	Scenario      string   `ff:"placeholder=NAME, long=scenario, usage='arm a client scenario from the start (see --list-scenarios)'"`
	ListScenarios bool     `ff:"long=list-scenarios, usage='print every client scenario and what a good client does, and exit'"`
	NoClientJudge bool     `ff:"long=no-client-judge, usage='do not judge the clients (GET /_control/clients: 404): for load tests'"`
	LogFormat     string   `ff:"long=log-format, usage='log format on stderr: text or json'"`
	LogLevel      string   `ff:"long=log-level, usage='log level: debug (a line a request), info, warn or error'"`
	// A conforming server drawn from a number (package simulator/variant).
	ConformingDraw string `ff:"placeholder=N, long=conforming-draw, usage='serve the conforming server drawn from N (0 or more): every choice the contract leaves open drawn (world, error codes, layout, cursors, framing, precedence, rate accounting, Retry-After, health, titles); N:heavy makes every heavy choice (300-character Unicode titles, channel events in VideoEntries, hourly samples, extra members); it sets the world and the limits; the banner lists it'"`
	// A world of data: a recording (tcmkit record) or an export.
	World  string `ff:"placeholder=FILE, long=world, usage='serve this world: a recording (tcmkit record) or an export (GET /_control/world); the clock starts at its time'"`
	Frozen bool   `ff:"long=frozen, usage='the world polls no more: time passes, nothing new happens (a recording served as it was recorded); the banner says frozen'"`
	// The fuzz schedule (package simulator/fuzz, ci/fuzz-seeds.sh).
	FuzzSeed string `ff:"placeholder=N, long=fuzz-seed, usage='serve the fuzz schedule of seed N: a world at the edges of the contract (in place of --seed, --channels, --history, --edge-rate), 429s, 5xx, slow and cut answers, a key revoked mid-walk; N:break also breaks the contract; GET /_control/fuzz says what was served'"`

	// What the settings make, once checked (check).
	logLevel slog.Level
	faults   []string // named faults (package mutants), --fault and --faults
	draw     *variant.Draw
	tlsPair  *tls.Certificate // --tls-cert and --tls-key, read at start
}

// Defaults are the settings before the environment and the flags: the
// simulator's defaults (simulator.Config.Defaults) with the command's seed
// 1 in real time, and the command's own.
func Defaults() Settings {
	return Settings{
		Sim:       simulator.Config{Seed: 1, Speed: 1}.Defaults(),
		Addr:      "127.0.0.1:8080",
		LogFormat: "text",
		LogLevel:  "info",
	}
}

// parseOptions fills the settings from defaults < environment < flags
// set, as the command named name, and checks them. It returns
// flag.ErrHelp after printing the help to stdout.
func parseOptions(name string, args []string, stdout io.Writer) (Settings, error) {
	s := Defaults()
	start := ff.FlagConfig{LongName: "start", Usage: "virtual time at start", Value: settings.TimeFlag{T: &s.Sim.Start}}
	if err := command(name).Parse(&s.Sim, args, stdout, start, &s); err != nil {
		return s, err
	}
	return s, s.check()
}

// check checks the settings before any work and makes what they describe:
// the simulator's Config (zero is the default, as in simulator.Config),
// the named faults, the draw, the TLS certificate, the judge.
func (s *Settings) check() error {
	s.Sim = s.Sim.Defaults()
	if err := s.Sim.Check(); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "simulator: "))
	}
	s.faults = append(append([]string(nil), s.Fault...), s.Faults...)
	if s.World != "" {
		w, err := readWorld(s.World, s.Sim.MaxImportBytes)
		if err != nil {
			return err
		}
		s.Sim.World = w
	}
	s.Sim.Frozen = s.Frozen
	if s.ConformingDraw != "" {
		num, heavy := strings.CutSuffix(strings.TrimSpace(s.ConformingDraw), ":heavy")
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid value %q for --conforming-draw: want a whole number of 0 or more, or N:heavy", s.ConformingDraw)
		}
		d := variant.New(n)
		if heavy {
			d = d.Heavy()
		}
		s.draw = &d
	}
	if len(s.faults) > simulator.MaxFaults {
		// Each copy of a fault wraps every request again: repeated
		// names count against the cap like any other.
		return fmt.Errorf("%d named faults (--fault, --faults; repeats count): want at most %d", len(s.faults), simulator.MaxFaults)
	}
	if len(s.faults) > 0 {
		layers, err := mutants.Layers(s.faults...)
		if err != nil {
			return err
		}
		s.Sim.Layers = layers
	}
	if err := s.applyFuzz(&s.Sim); err != nil {
		return err
	}
	if s.LogFormat != "text" && s.LogFormat != "json" {
		return fmt.Errorf("invalid value %q for --log-format: want text or json", s.LogFormat)
	}
	if err := s.logLevel.UnmarshalText([]byte(s.LogLevel)); err != nil {
		return fmt.Errorf("invalid value %q for --log-level: want debug, info, warn or error", s.LogLevel)
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if s.TLSCert != "" && !s.HealthCheck {
		pair, err := readTLS(s.TLSCert, s.TLSKey)
		if err != nil {
			return err
		}
		s.tlsPair = &pair
	}
	if s.InfoFile != "" {
		if err := outfile.Check(s.InfoFile); err != nil {
			return fmt.Errorf("--info-file: %w", err)
		}
	}
	if err := writableDir(s.ClientReport); err != nil {
		return fmt.Errorf("--client-report: %w", err)
	}
	if s.NoClientJudge && (s.Scenario != "" || s.ClientReport != "") {
		return errors.New("--scenario and --client-report need the client judge (not --no-client-judge)")
	}
	if !s.NoClientJudge {
		judge := clients.Config{Scenario: s.Scenario}
		if err := judge.Check(); err != nil {
			return fmt.Errorf("invalid value for --scenario: %s", strings.TrimPrefix(err.Error(), "clients: "))
		}
		s.Sim.Clients = clients.Judging(judge)
	}
	return nil
}

// maxPEM bounds a file of --tls-cert or --tls-key: a chain of a few
// certificates is a few kilobytes.
const maxPEM = 1 << 20

// readTLS reads and parses the certificate and its key at start, before
// the banner: a file that is missing, not PEM or endless (/dev/zero) is a
// bad setting, not a failure found once serving.
func readTLS(certFile, keyFile string) (tls.Certificate, error) {
	read := func(flag, name string) ([]byte, error) {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxPEM+1))
		if err == nil && len(b) > maxPEM {
			err = fmt.Errorf("larger than %d bytes: want a PEM file", maxPEM)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, name, err)
		}
		return b, nil
	}
	cert, err := read("--tls-cert", certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := read("--tls-key", keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("--tls-cert and --tls-key: %w", err)
	}
	return pair, nil
}

// writableDir checks at start that a file can be made in dir (made if
// missing), so that the client report is not lost at exit. "" is nothing
// to check.
func writableDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("want a directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tcmkit-check-*")
	if err != nil {
		return fmt.Errorf("want a directory we may write to: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
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
// the catalogue it breaks, and what it does; then how the cell faults
// (hundreds, not listed) are named.
func printFaults(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tBREAKS\tWHAT IT DOES")
	for _, name := range mutants.Names() {
		m, _ := mutants.Lookup(name)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, m.Requirement, m.Does)
	}
	tw.Flush()
	fmt.Fprint(w, "\n"+mutants.CellSyntax())
}

// Run is the command named name ("tcmkit simulate", "simulator") without
// the process: it serves until ctx is done and returns the exit status.
func Run(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	o, err := beforeServing(ctx, func() (Settings, error) { return parseOptions(name, args, stdout) }, nil)
	if errors.Is(err, errStopped) {
		fmt.Fprintf(stderr, "%s: stopped (%v) while reading its settings\n", name, context.Cause(ctx))
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", name, err)
		return 2
	}
	if o.ListFaults {
		printFaults(stdout)
		return 0
	}
	if o.ListScenarios {
		printScenarios(stdout)
		return 0
	}
	if o.HealthCheck {
		return healthCheck(name, o, stderr)
	}
	if !loopback(o.Addr) && o.Sim.ControlToken == "" && !o.Sim.NoControl {
		fmt.Fprintf(stderr, "%s: %v\n", name, exposed(o.Addr))
		return 2
	}
	if host, _, err := net.SplitHostPort(o.Addr); err == nil && host != "" && !loopback(o.Addr) {
		o.Sim.ControlHosts = append(o.Sim.ControlHosts, host) // the address it listens on
	}
	log := newLogger(o, stderr)
	o.Sim.Logger = log
	if o.draw != nil {
		o.draw.Apply(&o.Sim)
	}
	sim, err := beforeServing(ctx, func() (*simulator.Server, error) { return simulator.New(o.Sim) }, (*simulator.Server).Close)
	if errors.Is(err, errStopped) {
		fmt.Fprintf(stderr, "%s: stopped (%v) while building the world\n", name, context.Cause(ctx))
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s (see --help)\n", name, strings.TrimPrefix(err.Error(), "simulator: "))
		return 2
	}
	defer sim.Close()
	started, worldAt := time.Now(), sim.Now()

	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	ln = simulator.Listener(ln) // an answer and its header in one writev
	scheme := "http://"
	if o.TLSCert != "" {
		scheme = "https://"
	}
	info := sim.Info(scheme + ln.Addr().String())
	srv := sim.HTTPServer()
	served := serve(srv, ln, o.tlsPair)

	if o.InfoFile != "" {
		if err := writeInfo(ctx, o.InfoFile, info); err != nil {
			_ = srv.Close()
			if ctx.Err() != nil { // a signal while a FIFO waited for its reader
				fmt.Fprintf(stderr, "%s: stopped (%v) before the info file was read: %v\n", name, context.Cause(ctx), err)
				return 0
			}
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
	}
	printServing(stdout, o, info, worldAt)
	log.Info("listening", "url", info.URL, "serving", serving(o, info, worldAt), "speed", o.Sim.Speed)

	code := awaitEnd(ctx, name, stderr, log, sim, srv, served)
	if o.ClientReport != "" {
		// After the shutdown: every request that was answered is judged.
		// The exit status says the verdict (clients.ExitStatus: 3 a
		// client failed, 4 no client judged), unless serving failed.
		outcome, err := writeClientReport(o, clients.Of(sim), info, started, stdout)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
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

// serve serves on ln, over TLS when pair is set; the channel gets what
// ended serving.
func serve(srv *http.Server, ln net.Listener, pair *tls.Certificate) <-chan error {
	served := make(chan error, 1)
	go func() {
		if pair != nil {
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*pair}}
			served <- srv.ServeTLS(ln, "", "")
			return
		}
		served <- srv.Serve(ln)
	}()
	return served
}

// printServing says what the simulator serves, where, on which clock, and
// how its clients are judged.
func printServing(w io.Writer, o Settings, info simulator.Info, worldAt time.Time) {
	mode := "manual clock (POST " + info.ControlURL + "/clock/advance)"
	if o.Sim.Speed > 0 {
		mode = "real time × " + strconv.FormatFloat(o.Sim.Speed, 'g', -1, 64)
	}
	fmt.Fprintf(w, "Tracked-Channel Monitoring API simulator, %s, %s\n", serving(o, info, worldAt), mode)
	fmt.Fprintf(w, "  url:         %s\n", info.URL)
	if info.ControlURL != "" {
		fmt.Fprintf(w, "  control:     %s\n", info.ControlURL)
	}
	// Beyond loopback (a container), standard output ends up in logs that
	// others read: the keys are for GET /_control/info.
	fmt.Fprint(w, keyLines(info.Keys, !loopback(o.Addr)))
	fmt.Fprintf(w, "  exposure:    %s\n", exposure(o))
	fmt.Fprintf(w, "  clients:     %s\n", judging(o, info))
	if len(info.NamedFaults) > 0 {
		fmt.Fprintf(w, "  faults:      %s\n", namedFaults(info.NamedFaults))
	}
	if info.Recording != nil {
		fmt.Fprintf(w, "  recording:   %s\n", info.Recording)
	}
	if o.draw != nil {
		fmt.Fprint(w, "  "+strings.ReplaceAll(strings.TrimSuffix(o.draw.String(), "\n"), "\n", "\n  ")+"\n")
	}
}

// awaitEnd serves until serving fails or ctx is done, then shuts the server
// down within shutdownGrace; it returns the exit status so far.
func awaitEnd(ctx context.Context, name string, stderr io.Writer, log *slog.Logger, sim *simulator.Server, srv *http.Server, served <-chan error) int {
	code := 0
	select {
	case err := <-served:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		code = 1
	case <-ctx.Done():
		log.Info("shutting down; finishing in-flight requests", "grace", shutdownGrace)
		sim.Close() // the poller, and clock advances in flight, stop between two steps
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			// Past the grace, connections are cut: a handler still
			// writing (an export to a slow reader) fails and ends.
			log.Error("shutdown", "err", err)
			_ = srv.Close()
			code = 1
		}
	}
	return code
}

// errStopped is work before serving that a signal stopped.
var errStopped = errors.New("stopped before serving")

// beforeServing runs work that may take long before anything is served
// (a --world read from a FIFO that no one writes yet, a world of 10,000
// channels back-filled over a year) so that SIGINT or SIGTERM ends the
// command at once: once ctx ends, the work is left to finish on its own
// (done, when given, then disposes of what it made) and errStopped is
// returned.
func beforeServing[T any](ctx context.Context, work func() (T, error), done func(T) error) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := work()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		if done != nil {
			go func() {
				if r := <-ch; r.err == nil {
					_ = done(r.v)
				}
			}()
		}
		var zero T
		return zero, errStopped
	}
}

// healthCheck asks the simulator at o.Addr (0.0.0.0 and :: become
// loopback) whether it answers, as a container's health check does.
func healthCheck(name string, o Settings, stderr io.Writer) int {
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --addr %s: %v\n", name, o.Addr, err)
		return 2
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	scheme := "http"
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if o.TLSCert != "" {
		// A liveness probe of our own port: the name in the certificate is
		// not the point.
		scheme, tr.TLSClientConfig = "https", &tls.Config{InsecureSkipVerify: true}
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: tr}
	resp, err := c.Post(scheme+"://"+net.JoinHostPort(host, port)+schemas.PathHealth, "application/json", strings.NewReader("{}"))
	if err != nil {
		fmt.Fprintf(stderr, "%s: health check: %v\n", name, err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "%s: health check: status %d\n", name, resp.StatusCode)
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

// serving says at start what world is served: the seed's, or a world file's
// (--world) with its time, where the clock starts: a recording's is when
// it was recorded, an export's when it was exported. The seed makes no
// data of a world file. Then whether it is live or frozen (--frozen).
func serving(o Settings, info simulator.Info, at time.Time) string {
	pace := "live: it grows as time passes"
	if info.Frozen {
		pace = "frozen: time passes, nothing new happens"
	}
	if o.World == "" {
		return fmt.Sprintf("seed %d (%s)", o.Sim.Seed, pace)
	}
	what := "exported"
	if info.Recording != nil {
		what, at = "recorded", time.UnixMilli(info.Recording.RecordedAt)
	}
	return fmt.Sprintf("world %s (%s at %s; %s)", o.World, what, at.UTC().Format(time.RFC3339), pace)
}

// keyLines are the banner's lines of the seeded keys: each labelled with
// what the API does with it now (its role), its account, and its hint,
// the form the journal shows it in and filters on (?key=3f9a). redacted:
// the hint stands for the key.
func keyLines(keys []simulator.KeyRole, redacted bool) string {
	var b strings.Builder
	for _, k := range keys {
		label := k.Role + " key:"
		key := k.Key
		if redacted {
			key = k.Hint + " (whole: GET " + strings.TrimSuffix(simulator.ControlPrefix, "/") + "/info)"
		}
		what := "account " + k.Account + ", plan " + k.Role
		switch k.Role {
		case simulator.RoleRevoked:
			what = "account " + k.Account + "'s old key: 401 " + simulator.CodeRevokedKey
		case simulator.RoleUnknown:
			what = "no account's: 401 " + simulator.CodeUnknownKey
		}
		fmt.Fprintf(&b, "  %-12s %s  (%s; hint %s)\n", label, key, what, k.Hint)
	}
	return b.String()
}

// exposure says at start who can reach what.
func exposure(o Settings) string {
	var parts []string
	switch {
	case loopback(o.Addr):
		parts = append(parts, "loopback only")
	default:
		parts = append(parts, "reachable beyond this machine")
	}
	switch {
	case o.Sim.NoControl:
		parts = append(parts, "control API off")
	case o.Sim.ControlToken != "":
		parts = append(parts, "control API behind X-Control-Token")
	default:
		parts = append(parts, "control API open to loopback clients")
	}
	if len(o.Sim.CORSOrigins) > 0 {
		parts = append(parts, "browsers allowed from "+strings.Join(o.Sim.CORSOrigins, ", "))
	} else {
		parts = append(parts, "no CORS (--cors ORIGIN for a web page)")
	}
	return strings.Join(parts, "; ")
}

func newLogger(o Settings, w io.Writer) *slog.Logger {
	hopts := &slog.HandlerOptions{Level: o.logLevel}
	if o.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, hopts))
	}
	return slog.New(slog.NewTextHandler(w, hopts))
}

// writeInfo writes the info file as package outfile writes what a user
// names: a file whole or not at all (a rename), so a script polling for it
// never reads half of it; a FIFO, a device or a link written through, not
// replaced. A FIFO nobody reads is waited for until ctx ends (a signal).
func writeInfo(ctx context.Context, path string, info simulator.Info) error {
	info.Now = 0
	raw, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := outfile.Write(ctx, path, append(raw, '\n'), 0o600); err != nil {
		return fmt.Errorf("info file: %w", err)
	}
	return nil
}
