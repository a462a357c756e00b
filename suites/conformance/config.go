package conformance

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v4"
	"github.com/peterbourgon/ff/v4/ffhelp"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/client"
)

// Config is everything the suite needs to judge a target. NewConfig sets the
// defaults; flags, the environment or the caller fill it, and the suite then
// only reads it: what a run learns or builds lives in its Session.
//
// A field with an ff tag is a setting: its flag is the tag's long name and
// its environment variable is EnvPrefix_ and the name in upper case with
// underscores (--pro-key, TCM_PRO_KEY). See BindFlags.
type Config struct {
	// Target is the base URL of the server under test. Empty means "the
	// bundled simulator", which Run starts.
	Target string `ff:"long=target, usage='base URL of the server under test (default: start the bundled simulator)'"`
	// ProKey is a key of an account with a Pro plan that tracks at least one
	// channel. Required with a Target: the preflight fails without it.
	ProKey string `ff:"long=pro-key, usage='API key of a Pro account (required with --target)'"`
	// FreeKey is a key of an account on the free plan (optional).
	FreeKey string `ff:"long=free-key, usage='API key of a free account (enables the Pro-gate specs)'"`
	// RevokedKey is a key that was regenerated, so revoked (optional).
	RevokedKey string `ff:"long=revoked-key, usage='a revoked API key (enables the revoked-key specs)'"`
	// ReportDir is where Run writes the conformance report files.
	ReportDir string `ff:"long=report-dir, usage='directory for conformance-report.{json,md,html}'"`
	// MaxWait bounds one wait for the rate limit.
	MaxWait time.Duration `ff:"long=max-wait, usage='longest wait for one Retry-After'"`
	// MaxPages bounds a cursor walk of the feed (at 200 events a page).
	MaxPages int `ff:"long=max-pages, usage='longest cursor walk of the feed, in pages of 200 events'"`
	// MaxBody bounds one response body; a larger one fails the spec that
	// asked for it, unread.
	MaxBody ByteSize `ff:"long=max-body, usage='largest response body the suite reads, such as 4MiB; a larger one is a finding'"`
	// RequestTimeout bounds one exchange, from sending to the body's end.
	RequestTimeout time.Duration `ff:"long=request-timeout, usage='longest one request may take, body included'"`
	// RunDeadline bounds the whole run: past it the run ends as errored,
	// its reports written, naming the specs left undone.
	RunDeadline time.Duration `ff:"long=run-deadline, usage='longest the whole run may take; past it the run errors, reports written'"`
	// ControlClock says the target is a tcmkit simulator in manual mode:
	// the suite moves its clock through /_control/clock/advance instead of
	// sleeping (used when Clock is nil).
	ControlClock bool `ff:"long=control-clock, usage='the target is a tcmkit simulator in manual mode: advance its clock through /_control/ instead of sleeping'"`

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

// Defaults of NewConfig. A full run against a server that allows 20
// requests a minute takes one to two minutes: the run deadline leaves
// several times that.
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
		RunDeadline:    DefaultRunDeadline,
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
// not set: flags win over the environment, which wins over the defaults.
// std's usage ends with the settings and their environment variables.
func (c *Config) BindFlags(std *flag.FlagSet) *ff.FlagSet {
	fs := c.Flags()
	fs.WalkFlags(func(f ff.Flag) error {
		name, _ := f.GetLongName()
		std.Var(stdValue{f}, name, f.GetUsage()+" (env "+envName(name)+")")
		return nil
	})
	usage := std.Usage
	std.Usage = func() {
		if usage != nil {
			usage()
		}
		help := ffhelp.Help{
			ffhelp.NewSection("TRACKED-CHANNEL MONITORING CONFORMANCE SUITE",
				"a flag you set wins over its environment variable "+EnvPrefix+"_<FLAG> (--pro-key: "+envName("pro-key")+"),",
				"which wins over the default"),
			ffhelp.NewFlagsSection(fs),
		}
		fmt.Fprintf(std.Output(), "\n%s", help)
	}
	return fs
}

// ParseEnv sets every setting of fs that is still unset from its
// environment variable.
func ParseEnv(fs *ff.FlagSet) error {
	return ff.Parse(fs, nil, ff.WithEnvVarPrefix(EnvPrefix))
}

// envName is the environment variable of a flag, as ff derives it.
func envName(flagName string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// stdValue is an ff flag seen by a standard flag set: setting it through
// the standard set marks it set for ff too.
type stdValue struct{ f ff.Flag }

func (v stdValue) Set(s string) error { return v.f.SetValue(s) }

func (v stdValue) String() string {
	if v.f == nil { // flag.PrintDefaults asks a zero value
		return ""
	}
	return v.f.GetValue()
}

// IsBoolFlag lets a boolean setting stand alone (--control-clock). ff
// keeps which flags are boolean to itself but shows it in help: the
// placeholder of a boolean is empty while it is false, BOOL otherwise.
func (v stdValue) IsBoolFlag() bool {
	return v.f != nil && (v.f.GetPlaceholder() == "" || v.f.GetPlaceholder() == "BOOL")
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
