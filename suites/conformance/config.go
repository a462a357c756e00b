package conformance

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v4"
	"github.com/peterbourgon/ff/v4/ffhelp"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/settings"
	"github.com/tcmkit/tcmkit/suites/client"
)

// Config is everything the suite needs to judge a target. NewConfig sets the
// defaults; flags, the environment or the caller fill it, and the suite then
// only reads it: what a run learns or builds lives in its Session.
//
// A field with an ff tag is a setting: its flag is the tag's long name and
// its environment variable is EnvPrefix_ and the name in upper case with
// underscores (--pro-key, TCM_PRO_KEY). See BindFlags, and package
// schemas/settings for the dialect every program of the kit shares: zero
// is the default (MaxPages 0 walks DefaultMaxPages pages).
type Config struct {
	// Target is the base URL of the server under test. Empty means "the
	// bundled simulator", which Run starts.
	Target string `ff:"placeholder=URL, long=target, usage='base URL of the server under test (default: start the bundled simulator)'"`
	// ProKey is a key of an account with a Pro plan that tracks at least one
	// channel. Required with a Target: the preflight fails without it.
	ProKey string `ff:"placeholder=KEY, long=pro-key, usage='API key of a Pro account (required with --target)'"`
	// FreeKey is a key of an account on the free plan (optional).
	FreeKey string `ff:"placeholder=KEY, long=free-key, usage='API key of a free account (enables the Pro-gate specs)'"`
	// RevokedKey is a key that was regenerated, so revoked (optional).
	RevokedKey string `ff:"placeholder=KEY, long=revoked-key, usage='a revoked API key (enables the revoked-key specs)'"`
	// ReportDir is where Run writes the conformance report files.
	ReportDir string `ff:"placeholder=DIR, long=report-dir, usage='directory for conformance-report.{json,md,html}'"`
	// BaseDir is the directory a relative ReportDir is taken from; empty:
	// the working directory. go test and the ginkgo CLI run the suite in its
	// package's directory (suites/), not where they were started: a caller
	// that wants reports beside it passes its own directory here (or an
	// absolute ReportDir). tcmkit conform runs where it was started.
	BaseDir string `ff:"placeholder=DIR, long=base-dir, usage='directory a relative --report-dir is taken from (default: the working directory; under go test and ginkgo, suites/)'"`
	// MaxWait bounds one wait for the rate limit.
	MaxWait time.Duration `ff:"long=max-wait, usage='longest wait for one Retry-After'"`
	// MaxPages bounds a cursor walk of the feed (at 200 events a page).
	MaxPages int `ff:"long=max-pages, usage='longest cursor walk of the feed, in pages of 200 events'"`
	// MaxBody bounds one response body; a larger one fails the spec that
	// asked for it, unread.
	MaxBody ByteSize `ff:"long=max-body, usage='largest response body the suite reads, such as 4MiB; a larger one is a finding'"`
	// RequestTimeout bounds one exchange, from sending to the body's end.
	RequestTimeout time.Duration `ff:"long=request-timeout, usage='longest one request may take, body included'"`
	// RunDeadline bounds the whole run: past it the run ends incomplete,
	// its reports written, naming the specs left undone. Zero is the
	// profile's: 1.5 times its estimate against the target, at least
	// DefaultRunDeadline (estimate.go).
	RunDeadline time.Duration `ff:"long=run-deadline, nodefault, usage='longest the whole run may take; past it the run is incomplete (exit 3), reports written (default: 1.5 times the estimate of the profile, at least 10m: 33m for thorough against a 20-a-minute server; --list prints both)'"`
	// ControlClock says the target is a tcmkit simulator in manual mode:
	// the suite moves its clock through /_control/clock/advance instead of
	// sleeping (used when Clock is nil).
	ControlClock bool `ff:"long=control-clock, usage='the target is a tcmkit simulator in manual mode: advance its clock through /_control/ instead of sleeping'"`
	// Profile is how much of the generated probe grid a run spends its
	// requests on (package suites/probe): quick, the default, or thorough.
	Profile string `ff:"placeholder=NAME, long=profile, usage='quick (default: the generated probes get one window of each key) or thorough (every generated probe; 15 to 22 minutes against a 20-a-minute server, for nightly CI)'"`
	// ExploreSeed picks the requests explored from HTTP's grammar (package
	// suites/explore): the same seed, the same requests.
	ExploreSeed uint64 `ff:"placeholder=N, long=explore-seed, usage='seed of the requests explored from HTTP grammar (other key forms, bodies, Accept, queries, methods); the report and a rerun line name it'"`
	// RequireAll fails a run that left a must requirement unverified
	// (blocked, skipped, untried): for CI that must vouch for all of them.
	RequireAll bool `ff:"long=require-all, usage='fail the run (exit 1) when a must requirement was not verified (blocked, skipped for a key not given, untried by the profile)'"`

	// BurstKey is the key the rate-limit specs exhaust. Empty: the free key
	// when given, else the Pro key.
	BurstKey string
	// OtherKey must not be throttled by BurstKey's traffic. Empty: the Pro
	// key, or the free key when the Pro key is the burst key.
	OtherKey string
	// Clock is the target's time; nil is the wall clock (waiting sleeps),
	// or the control API's clock when ControlClock is set.
	Clock client.Clock
	// HTTP sends the requests; nil uses the suite client's own. Either way
	// no redirect is followed.
	HTTP *http.Client
	// Log receives progress lines that must be seen at once, such as
	// "waiting 42 s for the rate limit"; nil is standard error.
	Log io.Writer
	// Redactor redacts every key in everything the suite writes. Nil: the
	// Session makes its own. A Session adds the keys it uses to it.
	Redactor *redact.Redactor
}

// Defaults of NewConfig. A quick run against a server that allows 20
// requests a minute takes one to two minutes: the run deadline leaves
// several times that. A thorough run's default deadline is longer
// (estimate.go).
const (
	DefaultReportDir      = "reports"
	DefaultMaxPages       = 50
	DefaultMaxBody        = ByteSize(client.DefaultMaxBody)
	DefaultRequestTimeout = client.DefaultTimeout
	DefaultRunDeadline    = 10 * time.Minute
)

// EnvPrefix starts the environment variable of every setting (TCM_TARGET).
const EnvPrefix = "TCM"

// NewConfig returns a Config with the defaults set.
func NewConfig() *Config {
	return &Config{
		ReportDir:      DefaultReportDir,
		MaxWait:        2 * schemas.RateWindow,
		MaxPages:       DefaultMaxPages,
		MaxBody:        DefaultMaxBody,
		RequestTimeout: DefaultRequestTimeout,
		// RunDeadline 0: the profile's (settled)
	}
}

// Flags is the ff flag set of c's settings, writing into c; the values c
// holds now are the defaults. A program that owns its command line parses
// it with ff.Parse(c.Flags(), args, ff.WithEnvVarPrefix(EnvPrefix)).
func (c *Config) Flags() *ff.FlagSet { return ff.NewFlagSetFrom("conformance", c) }

// BindFlags registers c's settings on std, such as flag.CommandLine, which
// `go test` parses before the tests run, and returns the ff flag set behind
// them. A flag the user sets on std is set on the ff flag set, so that
// ParseEnv, called once std was parsed, fills only the settings the user did
// not set: flags win over the environment, which wins over the defaults
// (package schemas/settings). std's usage ends with the settings and their
// environment variables; for a flag std does not know (--prokey) it is
// short instead: the nearest setting and the settings alone, not every
// flag of go test and Ginkgo.
func (c *Config) BindFlags(std *flag.FlagSet) *ff.FlagSet {
	fs := c.Flags()
	settings.Bind(fs, std, func(name, help string) string { return help + " (env " + settings.EnvName(EnvPrefix, name) + ")" })
	usage := std.Usage
	std.Usage = func() {
		help := ffhelp.Help{
			ffhelp.NewSection("TRACKED-CHANNEL MONITORING CONFORMANCE SUITE",
				"a flag you set wins over its environment variable "+EnvPrefix+"_<FLAG> (--pro-key: "+settings.EnvName(EnvPrefix, "pro-key")+"),",
				"which wins over the default",
				fmt.Sprintf("exit status of the test binary: %d passed, %d failed (a spec failed, or --require-all and a must requirement not verified),", ExitPassed, ExitFailed),
				fmt.Sprintf("%d refused (a bad setting, a key in the wrong role), %d incomplete (the run did not finish: never passed)", ExitRefused, ExitIncomplete)),
			ffhelp.NewFlagsSection(fs),
		}
		if unknown := unknownFlag(std, argsOf(std)); unknown != "" {
			hint := ""
			if s := settings.Suggest(unknown, settings.Names(fs)); s != "" {
				hint = " (did you mean --" + s + "?)"
			}
			fmt.Fprintf(std.Output(), "unknown flag --%s%s\n\n%s\n(the flags of go test and Ginkgo: go help testflag, go tool ginkgo help run)\n", unknown, hint, help)
			return
		}
		if usage != nil {
			usage()
		}
		fmt.Fprintf(std.Output(), "\n%s", help)
	}
	return fs
}

// argsOf is the command line std parses: os.Args for flag.CommandLine.
var argsOf = func(std *flag.FlagSet) []string {
	if std == flag.CommandLine {
		return os.Args[1:]
	}
	return nil
}

// unknownFlag is the first flag of args that std does not know, without
// its dashes ("" if none): the one std's parse stopped at.
func unknownFlag(std *flag.FlagSet, args []string) string {
	for _, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			if a == "--" {
				return ""
			}
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			return ""
		}
		if std.Lookup(name) == nil {
			return name
		}
	}
	return ""
}

// ParseEnv sets every setting of fs that is still unset from its
// environment variable.
func ParseEnv(fs *ff.FlagSet) error { return settings.ParseEnv(fs, EnvPrefix) }

// envName is the environment variable of a setting's flag.
func envName(flag string) string { return settings.EnvName(EnvPrefix, flag) }

// settled is c as a run uses it: every zero count, size and duration set
// to its default, as the dialect has it (0 means the default, package
// schemas/settings), and the report directory absolute, a relative one
// taken from BaseDir (the working directory when it is empty).
func (c Config) settled() Config {
	d := NewConfig()
	if c.ReportDir == "" {
		c.ReportDir = d.ReportDir
	}
	if c.MaxWait == 0 {
		c.MaxWait = d.MaxWait
	}
	if c.MaxPages == 0 {
		c.MaxPages = d.MaxPages
	}
	if c.MaxBody == 0 {
		c.MaxBody = d.MaxBody
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = d.RequestTimeout
	}
	if c.RunDeadline == 0 {
		c.RunDeadline = estimateOf(c.Profile, c.virtualTarget()).deadline()
	}
	if !filepath.IsAbs(c.ReportDir) {
		base := c.BaseDir
		if base == "" {
			base = workDir()
		}
		c.ReportDir = filepath.Join(base, c.ReportDir)
	}
	return c
}

// TB is what Run needs of the test it runs in: a *testing.T, or the stand-in
// of a command that runs the suite without go test (cmd/tcmkit conform).
type TB interface {
	Fail()
	Deadline() (time.Time, bool)
}

func workDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}

// Describe returns the settings for the report, keys redacted.
func (c Config) Describe() map[string]string {
	m := map[string]string{}
	c.Flags().WalkFlags(func(f ff.Flag) error {
		name, _ := f.GetLongName()
		m[name] = f.GetValue()
		return nil
	})
	for _, k := range []string{"pro-key", "free-key", "revoked-key"} {
		if m[k] != "" {
			m[k] = redact.Form(m[k])
		}
	}
	if m["target"] == "" {
		m["target"] = "(bundled simulator)"
	}
	return m
}

// target is the Target this Config names (empty URL: the bundled simulator).
func (c *Config) target() Target {
	return Target{URL: c.Target, Pro: c.ProKey, Free: c.FreeKey, Revoked: c.RevokedKey,
		Burst: c.BurstKey, Other: c.OtherKey, ControlClock: c.ControlClock}
}

func (c *Config) log() io.Writer {
	if c.Log != nil {
		return c.Log
	}
	return os.Stderr
}
