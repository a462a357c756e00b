package conformance

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/peterbourgon/ff/v4"
)

// bind is what suites_test.go does: the settings on a standard flag set
// that is parsed first, then the environment.
func bind(t *testing.T, args []string) (*Config, error) {
	t.Helper()
	c := NewConfig()
	std := flag.NewFlagSet("suite", flag.ContinueOnError)
	std.SetOutput(io.Discard)
	fs := c.BindFlags(std)
	if err := std.Parse(args); err != nil {
		t.Fatal(err)
	}
	return c, ParseEnv(fs)
}

func TestConfigPrecedence(t *testing.T) {
	env := map[string]string{
		"TCM_TARGET":        "http://env.example",
		"TCM_PRO_KEY":       "tcm_fromenvfromenvfromenvfromenv0000",
		"TCM_FREE_KEY":      "tcm_freefromenvfreefromenvfreefrom00",
		"TCM_REPORT_DIR":    "env-reports",
		"TCM_MAX_WAIT":      "90s",
		"TCM_CONTROL_CLOCK": "true",
	}
	for _, tc := range []struct {
		name string
		args []string
		want func(c *Config) []string // got, want pairs
	}{
		{"defaults without flags or env", nil, nil},
		{"env over defaults", []string{}, func(c *Config) []string {
			return []string{c.Target, "http://env.example", c.FreeKey, env["TCM_FREE_KEY"], c.ReportDir, "env-reports", c.MaxWait.String(), "1m30s", c.Describe()["control-clock"], "true"}
		}},
		{"flags over env", []string{"--target", "http://flag.example", "--max-wait=5s"}, func(c *Config) []string {
			return []string{c.Target, "http://flag.example", c.ProKey, env["TCM_PRO_KEY"], c.MaxWait.String(), "5s"}
		}},
		{"a flag set to its default still wins", []string{"--report-dir", DefaultReportDir}, func(c *Config) []string {
			return []string{c.ReportDir, DefaultReportDir, c.Target, "http://env.example"}
		}},
		{"a flag set to empty wins too", []string{"--free-key="}, func(c *Config) []string {
			return []string{c.FreeKey, ""}
		}},
		{"a boolean flag stands alone and wins", []string{"--control-clock=false", "-max-pages", "7"}, func(c *Config) []string {
			return []string{c.Describe()["control-clock"], "false", c.Describe()["max-pages"], "7"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range env {
				if tc.args == nil {
					v = ""
				}
				t.Setenv(k, v)
			}
			c, err := bind(t, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if c.Target != "" || c.ReportDir != DefaultReportDir || c.MaxWait != 2*time.Minute || c.MaxPages != DefaultMaxPages || c.ControlClock {
					t.Errorf("defaults: %+v", c)
				}
				return
			}
			p := tc.want(c)
			for i := 0; i < len(p); i += 2 {
				if p[i] != p[i+1] {
					t.Errorf("got %q, want %q", p[i], p[i+1])
				}
			}
		})
	}
}

func TestBooleanFlagAlone(t *testing.T) {
	c, err := bind(t, []string{"--control-clock", "--target", "http://flag.example"})
	if err != nil || !c.ControlClock || c.Target != "http://flag.example" {
		t.Errorf("--control-clock alone: %v %+v", err, c)
	}
}

func TestParseEnvRejectsBadValues(t *testing.T) {
	for k, v := range map[string]string{"TCM_MAX_WAIT": "soon", "TCM_MAX_PAGES": "many", "TCM_CONTROL_CLOCK": "maybe"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, v)
			if _, err := bind(t, nil); err == nil || !strings.Contains(err.Error(), k) {
				t.Errorf("%s=%s: %v", k, v, err)
			}
		})
	}
}

func TestFlagsForAProgram(t *testing.T) {
	t.Setenv("TCM_PRO_KEY", "tcm_fromenvfromenvfromenvfromenv0000")
	c := NewConfig()
	if err := ff.Parse(c.Flags(), []string{"--target", "http://flag.example", "--control-clock"}, ff.WithEnvVarPrefix(EnvPrefix)); err != nil {
		t.Fatal(err)
	}
	if c.Target != "http://flag.example" || c.ProKey != "tcm_fromenvfromenvfromenvfromenv0000" || !c.ControlClock {
		t.Errorf("ff.Parse: %+v", c)
	}
}

func TestHelpNamesEverySetting(t *testing.T) {
	c := NewConfig()
	std := flag.NewFlagSet("suite", flag.ContinueOnError)
	var out bytes.Buffer
	std.SetOutput(&out)
	c.BindFlags(std)
	if err := std.Parse([]string{"-h"}); err != flag.ErrHelp {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"--target", "--pro-key", "--control-clock", "--max-wait", "TCM_PRO_KEY", "TCM_REPORT_DIR", "(default: reports)",
		"--require-all", "TCM_REQUIRE_ALL", "0 passed, 1 failed", "2 refused", "3 incomplete"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}

func TestDescribeRedactsKeys(t *testing.T) {
	c := NewConfig()
	c.ProKey = "tcm_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	d := c.Describe()
	if d["pro-key"] != "tcm_…#1fa1" || d["target"] != "(bundled simulator)" || d["max-wait"] != "2m0s" {
		t.Errorf("Describe = %v", d)
	}
	for k, v := range d {
		if strings.Contains(v, c.ProKey) {
			t.Errorf("%s holds the whole key", k)
		}
	}
}

func TestKeysOfATarget(t *testing.T) {
	tg := Target{Pro: "live_pro0000000000", Free: "live_free000000000"}
	if tg.KeyPrefix() != "live" || tg.burstKey() != tg.Free || tg.otherKey() != tg.Pro {
		t.Errorf("prefix %q burst %q other %q", tg.KeyPrefix(), tg.burstKey(), tg.otherKey())
	}
	tg.Free = ""
	if tg.burstKey() != tg.Pro || tg.otherKey() != "" {
		t.Errorf("without a free key: burst %q other %q", tg.burstKey(), tg.otherKey())
	}
	if err := newSession(&Config{}).validate(); err == nil || !strings.Contains(err.Error(), "--target") || !strings.Contains(err.Error(), "--pro-key") {
		t.Errorf("validate of an empty config: %v", err)
	}
}

func TestSessionLeavesConfigAlone(t *testing.T) {
	c := NewConfig()
	c.Target, c.ProKey, c.ControlClock = "http://127.0.0.1:1", "tcm_AbCdEfGhIjKlMnOpQrStUvWxYz012345", true
	before := *c
	s := newSession(c)
	s.Client()
	if *c != before {
		t.Errorf("the session changed its Config:\n%+v\n%+v", before, *c)
	}
	if s.clock == nil || s.Redactor() == nil || s.Target().URL != c.Target {
		t.Errorf("the session did not build its own clock and redactor: %+v", s)
	}
}

// TestRelativeReportDirIsTakenFromBaseDir: a relative --report-dir is
// taken from --base-dir when it is given, from the working directory
// otherwise (under go test and ginkgo, the package's directory); an
// absolute one stays. Nothing is guessed from the parent process.
func TestRelativeReportDirIsTakenFromBaseDir(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	user := t.TempDir()
	c := NewConfig()
	c.ReportDir = "out"
	if got := c.settled().ReportDir; got != filepath.Join(wd, "out") {
		t.Errorf("relative report dir without a base settled as %s, want %s", got, filepath.Join(wd, "out"))
	}
	c.BaseDir = user
	if got := c.settled().ReportDir; got != filepath.Join(user, "out") {
		t.Errorf("relative report dir with --base-dir %s settled as %s", user, got)
	}
	fs := NewConfig()
	if err := fs.Flags().Parse([]string{"--base-dir", user}); err != nil || fs.BaseDir != user {
		t.Errorf("--base-dir: %v, BaseDir %q", err, fs.BaseDir)
	}
	c.ReportDir = wd
	if got := c.settled().ReportDir; got != wd {
		t.Errorf("absolute report dir settled as %s", got)
	}
}

func TestZeroIsTheDefault(t *testing.T) {
	got := Config{}.settled()
	d := NewConfig().settled()
	if got.MaxPages != d.MaxPages || got.MaxWait != d.MaxWait || got.MaxBody != d.MaxBody ||
		got.RequestTimeout != d.RequestTimeout || got.RunDeadline != d.RunDeadline || filepath.Base(got.ReportDir) != DefaultReportDir {
		t.Errorf("settled zero Config: %+v", got)
	}
}

// TestDeadlineFollowsTheProfile: the default run deadline is at least 1.5
// times the profile's estimate for the target (thorough against a
// 20-a-minute server waits 15 to 22 minutes for rate windows), never less
// than DefaultRunDeadline; the list prints both and they agree; a deadline
// given is kept, and one shorter than the estimate is said to be.
func TestDeadlineFollowsTheProfile(t *testing.T) {
	for _, tc := range []struct {
		profile, target string
		control         bool
	}{{"", "", false}, {"thorough", "", false}, {"quick", "http://x", false}, {"thorough", "http://x", false}, {"thorough", "http://x", true}} {
		c := Config{Profile: tc.profile, Target: tc.target, ControlClock: tc.control}.settled()
		e := estimateOf(tc.profile, c.virtualTarget())
		if c.RunDeadline < e.high*3/2 || c.RunDeadline < DefaultRunDeadline || c.RunDeadline != e.deadline() {
			t.Errorf("%+v: deadline %s for an estimate of %s", tc, c.RunDeadline, e)
		}
		if says := deadlineSays(c); !strings.Contains(says, "--run-deadline "+c.RunDeadline.String()) || !strings.Contains(says, "the default of --profile") {
			t.Errorf("%+v: %q", tc, says)
		}
	}
	thorough := estimateOf("thorough", false)
	if thorough.low < 13*time.Minute || thorough.high > 25*time.Minute || thorough.low >= thorough.high {
		t.Errorf("thorough against a 20-a-minute server: %s (measured: 14 min, and 19 min of virtual time waited)", thorough)
	}
	if quick := estimateOf("quick", false); quick.high > 2*time.Minute {
		t.Errorf("quick: %s, want one to two windows", quick)
	}
	// --help says the default of thorough: the figure cannot drift
	var help bytes.Buffer
	std := flag.NewFlagSet("suite", flag.ContinueOnError)
	std.SetOutput(&help)
	NewConfig().BindFlags(std)
	std.Usage()
	if want := fmt.Sprintf("%dm for thorough", int(thorough.deadline().Minutes())); !strings.Contains(help.String(), want) {
		t.Errorf("--help does not say %q:\n%s", want, help.String())
	}
	short := Config{Profile: "thorough", Target: "http://x", RunDeadline: 10 * time.Minute}.settled()
	if says := deadlineSays(short); short.RunDeadline != 10*time.Minute || !strings.Contains(says, "shorter than the estimate ("+thorough.span()+"): the run may end incomplete (exit 3)") {
		t.Errorf("a deadline shorter than the estimate: %s, %q", short.RunDeadline, says)
	}
}

// TestMistypedFlagIsShort: a flag the suite does not know gets the nearest
// setting and the settings, not every flag of go test and Ginkgo.
func TestMistypedFlagIsShort(t *testing.T) {
	std := flag.NewFlagSet("suite", flag.ContinueOnError)
	std.Bool("test.v", false, "go test's")
	var out bytes.Buffer
	std.SetOutput(&out)
	NewConfig().BindFlags(std)
	args := []string{"-test.v", "--prokey", "x"}
	defer func(f func(*flag.FlagSet) []string) { argsOf = f }(argsOf)
	argsOf = func(*flag.FlagSet) []string { return args }
	if err := std.Parse(args); err == nil {
		t.Fatal("--prokey parsed")
	}
	if !strings.Contains(out.String(), "unknown flag --prokey (did you mean --pro-key?)") || strings.Contains(out.String(), "test.v") {
		t.Errorf("output:\n%s", out.String())
	}
	if n := strings.Count(out.String(), "\n"); n > 30 {
		t.Errorf("%d lines", n)
	}
}

// TestListSaysEstimateAndDeadline: --list ends with the profile's estimate
// for the target and the run deadline beside it.
func TestListSaysEstimateAndDeadline(t *testing.T) {
	c := Config{Profile: "thorough", Target: "http://staging.example"}.settled()
	var out bytes.Buffer
	printList(&out, types.Report{}, c)
	e := estimateOf("thorough", false)
	for _, want := range []string{
		"Estimate of a whole run: --profile thorough against a server of 20 requests a minute per key: " + e.span() + " waiting for rate windows",
		"Deadline: the run ends by --run-deadline " + e.deadline().String() + " (the default of --profile thorough: 1.5 times the estimate",
		"cut short, it is incomplete (exit 3)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the list does not say %q:\n%s", want, out.String())
		}
	}
	bundled := Config{Profile: "thorough"}.settled()
	out.Reset()
	printList(&out, types.Report{}, bundled)
	if !strings.Contains(out.String(), "on the simulator's clock: no real wait") || !strings.Contains(out.String(), "--run-deadline "+DefaultRunDeadline.String()) {
		t.Errorf("against the bundled simulator:\n%s", out.String())
	}
}
