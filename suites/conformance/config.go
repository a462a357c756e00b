// Package conformance is the conformance suite of the Tracked-Channel
// Monitoring API as a library: a Config, and Register, which declares every
// spec (Ginkgo Describe/It with feature and requirement labels). The suite
// speaks HTTP to its target and nothing else; only time control (waiting for
// a rate window) goes through the Clock of the Config.
//
// Run it with `go tool ginkgo ./suites` (package suites is the thin entry
// point), or register the specs inside your own Ginkgo suite:
//
//	cfg := conformance.NewConfig()
//	cfg.Target, cfg.ProKey = "https://staging.example", os.Getenv("TCM_PRO_KEY")
//	var _ = conformance.Register(cfg)
//
// # Request budget
//
// With N the number of events in the Pro account's feed and P = ceil(N/200)
// (at least 1), a full default run sends P + 63 requests:
//
//	setup        2  health, the first feed page (both reused by specs)
//	rate-limit  23  a burst of 20 feed requests on the burst key and the 21st,
//	                answered 429; 1 on the other key while the first is
//	                throttled; 1 after waiting what Retry-After said
//	auth        13  6 bad credentials × 2 operations, 1 valid key on videos
//	pro          2  the free key on the feed (200) and on videos (403)
//	pagination P+11 the walk at limit=200 (P pages), pages 2-5 at the default
//	                size, limit=1, limit=201, 4 bad limits, an unknown cursor
//	videos      12  1, 20, 0 and 21 ids; 32, 33 and 0 characters; 5 bad bodies
//	events       0  they judge the pages and entries the others fetched
//	errors       0  likewise
//
// By key: Pro feed P + 8, Pro videos 13, burst key (the free key when
// given) 28 on the feed and 1 on videos, and 13 with no valid key.
//
// Against a server that allows 20 feed requests a minute per key, the run
// cannot be shorter than the wait Retry-After imposes after the burst: one
// window (60 s) for a sliding or fixed window, about 3 s for a token bucket.
// The suite stays near that floor: the rate-limit specs run first, while the
// burst key's window is fresh; the bad-parameter requests go to the free key
// (which has room once the burst left its window), and both feed walks are
// fetched in the background while the rate-limit spec waits for Retry-After,
// so the Pro key's own wait for its window (P + 8 > 20 requests) overlaps it.
// Measured (2 cores): against `go run ./cmd/simulator --speed 1` (a sliding
// window; P = 19), 82 requests in 61.9 s with all three keys, 80 in 121.7 s
// with only a Pro key (the burst and the walks then share one key: two
// windows); against the bundled simulator (`go tool ginkgo ./suites`), 78
// requests in about one second, since its clock is moved, not waited for.
package conformance

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/redact"
)

// Config is everything the suite needs to judge a target. NewConfig sets the
// defaults; flags and the environment fill it (see BindFlags, ApplyEnv).
type Config struct {
	// Target is the base URL of the server under test. Empty means "the
	// bundled simulator", which the entry point starts and fills in.
	Target string
	// ProKey is a key of an account with a Pro plan that tracks at least one
	// channel. Required: the preflight fails without it.
	ProKey string
	// FreeKey is a key of an account on the free plan (optional).
	FreeKey string
	// RevokedKey is a key that was regenerated, so revoked (optional).
	RevokedKey string
	// BurstKey is the key the rate-limit specs exhaust. Empty: the free key
	// when given, else the Pro key.
	BurstKey string
	// OtherKey must not be throttled by BurstKey's traffic. Empty: the Pro
	// key, or the free key when the Pro key is the burst key.
	OtherKey string
	// ReportDir is where the conformance report files are written.
	ReportDir string
	// MaxWait bounds one wait for the rate limit.
	MaxWait time.Duration
	// MaxPages bounds a cursor walk of the feed (at 200 events a page).
	MaxPages int
	// ControlClock says the target is a tcmkit simulator in manual mode:
	// the suite moves its clock through /_control/clock/advance instead of
	// sleeping (used when Clock is nil).
	ControlClock bool
	// Clock is the target's time; nil is the wall clock (waiting sleeps),
	// or the control API's clock when ControlClock is set.
	Clock client.Clock
	// HTTP sends the requests; nil uses a client with a 30 s timeout.
	HTTP *http.Client
	// Log receives progress lines that must be seen at once, such as
	// "waiting 42 s for the rate limit"; nil is standard error.
	Log io.Writer
	// Redactor redacts every key in everything the suite writes. Nil: one
	// for the keys of this Config, built on first use.
	Redactor *redact.Redactor

	run *run // built on first use, after the entry point filled the fields
}

// Defaults of NewConfig.
const (
	DefaultReportDir = "reports"
	DefaultMaxPages  = 50
)

// NewConfig returns a Config with the defaults set.
func NewConfig() *Config {
	return &Config{
		ReportDir: DefaultReportDir,
		MaxWait:   2 * schemas.RateWindow,
		MaxPages:  DefaultMaxPages,
	}
}

// setting is one configuration value settable by flag and environment.
type setting struct {
	flag, env, usage string
	str              *string
	dur              *time.Duration
	num              *int
	boolean          *bool
}

func (c *Config) settings() []setting {
	return []setting{
		{flag: "target", env: "TCM_TARGET", str: &c.Target, usage: "base URL of the server under test (default: start the bundled simulator)"},
		{flag: "pro-key", env: "TCM_PRO_KEY", str: &c.ProKey, usage: "API key of a Pro account (required with --target)"},
		{flag: "free-key", env: "TCM_FREE_KEY", str: &c.FreeKey, usage: "API key of a free account (enables the Pro-gate specs)"},
		{flag: "revoked-key", env: "TCM_REVOKED_KEY", str: &c.RevokedKey, usage: "a revoked API key (enables the revoked-key specs)"},
		{flag: "report-dir", env: "TCM_REPORT_DIR", str: &c.ReportDir, usage: "directory for conformance-report.{json,md,html}"},
		{flag: "max-wait", env: "TCM_MAX_WAIT", dur: &c.MaxWait, usage: "longest wait for one Retry-After"},
		{flag: "max-pages", env: "TCM_MAX_PAGES", num: &c.MaxPages, usage: "longest cursor walk of the feed, in pages of 200 events"},
		{flag: "control-clock", env: "TCM_CONTROL_CLOCK", boolean: &c.ControlClock, usage: "the target is a tcmkit simulator in manual mode: advance its clock through /_control/ instead of sleeping"},
	}
}

// BindFlags registers the suite's flags on fs, writing into c. Flags the
// user sets win over the environment (see ApplyEnv), which wins over the
// defaults.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	for _, s := range c.settings() {
		usage := s.usage + " (env " + s.env + ")"
		switch {
		case s.str != nil:
			fs.StringVar(s.str, s.flag, *s.str, usage)
		case s.dur != nil:
			fs.DurationVar(s.dur, s.flag, *s.dur, usage)
		case s.num != nil:
			fs.IntVar(s.num, s.flag, *s.num, usage)
		case s.boolean != nil:
			fs.BoolVar(s.boolean, s.flag, *s.boolean, usage)
		}
	}
}

// ApplyEnv fills every setting whose flag the user did not set on fs (after
// fs was parsed) from the environment, read through getenv.
func (c *Config) ApplyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, s := range c.settings() {
		v := getenv(s.env)
		if set[s.flag] || v == "" {
			continue
		}
		switch {
		case s.str != nil:
			*s.str = v
		case s.dur != nil:
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s: %w", s.env, err)
			}
			*s.dur = d
		case s.num != nil:
			var n int
			if _, err := fmt.Sscan(v, &n); err != nil {
				return fmt.Errorf("%s: %q is not a number: %w", s.env, v, err)
			}
			*s.num = n
		case s.boolean != nil:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%s: %q is not a boolean: %w", s.env, v, err)
			}
			*s.boolean = b
		}
	}
	return nil
}

// Describe returns the configuration for the report, keys redacted.
func (c *Config) Describe() map[string]string {
	m := map[string]string{}
	for _, s := range c.settings() {
		switch {
		case s.str != nil:
			m[s.flag] = *s.str
		case s.dur != nil:
			m[s.flag] = s.dur.String()
		case s.num != nil:
			m[s.flag] = fmt.Sprint(*s.num)
		case s.boolean != nil:
			m[s.flag] = strconv.FormatBool(*s.boolean)
		}
	}
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

// Validate says what is wrong with a Config that the entry point filled.
func (c *Config) Validate() error {
	var errs []string
	if c.Target == "" {
		errs = append(errs, "no target: give --target URL (or TCM_TARGET)")
	} else if !strings.HasPrefix(c.Target, "http://") && !strings.HasPrefix(c.Target, "https://") {
		errs = append(errs, fmt.Sprintf("target %q is not an http(s) URL", c.Target))
	}
	if c.ProKey == "" {
		errs = append(errs, "no Pro key: give --pro-key KEY (or TCM_PRO_KEY)")
	}
	if c.MaxPages < 1 {
		errs = append(errs, fmt.Sprintf("max-pages %d: must be at least 1", c.MaxPages))
	}
	if len(errs) > 0 {
		return fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Secrets lists the keys of the Config, for a redactor.
func (c *Config) Secrets() []string {
	return []string{c.ProKey, c.FreeKey, c.RevokedKey, c.BurstKey, c.OtherKey}
}

// KeyPrefix is the key prefix the target uses, derived from the Pro key:
// everything before its first underscore ("" if it has none).
func (c *Config) KeyPrefix() string {
	p, _, ok := strings.Cut(c.ProKey, "_")
	if !ok {
		return ""
	}
	return p
}

// invented returns n fixed characters of the key alphabet, so that runs
// are repeatable.
func invented(n int) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[(i*7+3)%len(alnum)]
	}
	return string(b)
}

// unknownKey is a well-formed key (the Pro key's prefix and length) that
// belongs to no account.
func (c *Config) unknownKey() string {
	n := 32
	if _, r, ok := strings.Cut(c.ProKey, "_"); ok && len(r) >= 8 {
		n = len(r)
	}
	return c.KeyPrefix() + "_" + invented(n)
}

// unprefixedToken is a token as long as the Pro key without its prefix.
func (c *Config) unprefixedToken() string { return invented(len(c.ProKey)) }

func (c *Config) burstKey() string {
	switch {
	case c.BurstKey != "":
		return c.BurstKey
	case c.FreeKey != "":
		return c.FreeKey
	}
	return c.ProKey
}

func (c *Config) otherKey() string {
	switch {
	case c.OtherKey != "":
		return c.OtherKey
	case c.burstKey() != c.ProKey:
		return c.ProKey
	}
	return c.FreeKey
}

// paramKey sends the feed requests with bad parameters. The rule does not
// depend on the plan, and the free key (when given) has room to spare once
// the rate-limit burst has left its window, while the Pro key's window is
// filled by the cursor walks; spreading them keeps a run near its floor.
func (c *Config) paramKey() string {
	if c.FreeKey != "" {
		return c.FreeKey
	}
	return c.ProKey
}

func (c *Config) log() io.Writer {
	if c.Log != nil {
		return c.Log
	}
	return os.Stderr
}
