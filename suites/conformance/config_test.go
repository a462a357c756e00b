package conformance

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestConfigPrecedence(t *testing.T) {
	env := map[string]string{
		"TCM_TARGET":     "http://env.example",
		"TCM_PRO_KEY":    "tcm_fromenvfromenvfromenvfromenv0000",
		"TCM_FREE_KEY":   "tcm_freefromenvfreefromenvfreefrom00",
		"TCM_REPORT_DIR": "env-reports",
		"TCM_MAX_WAIT":   "90s",
	}
	for _, tc := range []struct {
		name string
		args []string
		want func(c *Config) []string // got, want pairs
	}{
		{"defaults without flags or env", nil, nil},
		{"env over defaults", []string{}, func(c *Config) []string {
			return []string{c.Target, "http://env.example", c.FreeKey, env["TCM_FREE_KEY"], c.ReportDir, "env-reports", c.MaxWait.String(), "1m30s"}
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConfig()
			fs := flag.NewFlagSet("suite", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			c.BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			getenv := func(k string) string { return env[k] }
			if tc.args == nil {
				getenv = func(string) string { return "" }
			}
			if err := c.ApplyEnv(fs, getenv); err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if c.Target != "" || c.ReportDir != DefaultReportDir || c.MaxWait != 2*time.Minute || c.MaxPages != DefaultMaxPages {
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

func TestApplyEnvRejectsBadValues(t *testing.T) {
	for k, v := range map[string]string{"TCM_MAX_WAIT": "soon", "TCM_MAX_PAGES": "many"} {
		c := NewConfig()
		fs := flag.NewFlagSet("suite", flag.ContinueOnError)
		c.BindFlags(fs)
		fs.Parse(nil)
		if err := c.ApplyEnv(fs, func(name string) string {
			if name == k {
				return v
			}
			return ""
		}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}

func TestDescribeRedactsKeys(t *testing.T) {
	c := NewConfig()
	c.ProKey = "tcm_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	d := c.Describe()
	if d["pro-key"] != "tcm_…2345" || d["target"] != "(bundled simulator)" {
		t.Errorf("Describe = %v", d)
	}
	for k, v := range d {
		if strings.Contains(v, c.ProKey) {
			t.Errorf("%s holds the whole key", k)
		}
	}
}

func TestKeysOfARun(t *testing.T) {
	c := NewConfig()
	c.ProKey, c.FreeKey = "live_pro0000000000", "live_free000000000"
	if c.KeyPrefix() != "live" || c.burstKey() != c.FreeKey || c.otherKey() != c.ProKey {
		t.Errorf("prefix %q burst %q other %q", c.KeyPrefix(), c.burstKey(), c.otherKey())
	}
	c.FreeKey = ""
	if c.burstKey() != c.ProKey || c.otherKey() != "" {
		t.Errorf("without a free key: burst %q other %q", c.burstKey(), c.otherKey())
	}
	if err := (&Config{}).Validate(); err == nil || !strings.Contains(err.Error(), "--target") || !strings.Contains(err.Error(), "--pro-key") {
		t.Errorf("Validate of an empty config: %v", err)
	}
}
