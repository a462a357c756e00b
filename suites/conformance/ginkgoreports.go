package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
)

// ginkgoReports are the report files Ginkgo's flags ask for (--json-report,
// --junit-report, --gojson-report, --teamcity-report). Run takes them from
// Ginkgo, which would write what its report holds as it stands (a key
// echoed in a spec's output, a failure message no one redacted), and
// writes them itself from the report redacted: no unredacted copy is ever
// on disk.
type ginkgoReports struct {
	json, junit, gojson, teamcity string
}

// takeGinkgoReports moves the report files out of rc, so that Ginkgo
// writes none of them.
func takeGinkgoReports(rc *types.ReporterConfig) ginkgoReports {
	g := ginkgoReports{json: rc.JSONReport, junit: rc.JUnitReport, gojson: rc.GoJSONReport, teamcity: rc.TeamcityReport}
	rc.JSONReport, rc.JUnitReport, rc.GoJSONReport, rc.TeamcityReport = "", "", "", ""
	return g
}

// write writes the files asked for, with Ginkgo's own writers, from rep
// with every string in it passed through redact; and then passes each
// file's text through redact once more (a writer that joins two strings
// may join two halves of a key).
func (g ginkgoReports) write(rep types.Report, redact func(string) string) error {
	if g == (ginkgoReports{}) {
		return nil
	}
	clean, err := redactedReport(rep, redact)
	if err != nil {
		return fmt.Errorf("Ginkgo's reports were not written: %w", err)
	}
	var errs []error
	for _, f := range []struct {
		path string
		gen  func(types.Report, string) error
	}{
		{g.json, reporters.GenerateJSONReport}, {g.junit, reporters.GenerateJUnitReport},
		{g.gojson, reporters.GenerateGoTestJSONReport}, {g.teamcity, reporters.GenerateTeamcityReport},
	} {
		if f.path == "" {
			continue
		}
		if err := f.gen(clean, f.path); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, redactFile(f.path, redact))
	}
	return errors.Join(errs...)
}

// redactedReport is rep with every string in it, keys of maps included,
// passed through redact: rep goes through JSON, Ginkgo's own format for
// it (its command line reads reports back the same way), and each string
// of the tree is redacted on its own.
func redactedReport(rep types.Report, redact func(string) string) (types.Report, error) {
	raw, err := json.Marshal(rep)
	if err != nil {
		return types.Report{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // durations in nanoseconds stay exact
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return types.Report{}, err
	}
	if raw, err = json.Marshal(redactTree(tree, redact)); err != nil {
		return types.Report{}, err
	}
	var out types.Report
	err = json.Unmarshal(raw, &out)
	return out, err
}

func redactTree(v any, redact func(string) string) any {
	switch v := v.(type) {
	case string:
		return redact(v)
	case []any:
		for i := range v {
			v[i] = redactTree(v[i], redact)
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[redact(k)] = redactTree(e, redact)
		}
		return out
	}
	return v
}

// redactFile passes the text of the file at path through redact, and
// writes it back when that changed it.
func redactFile(path string, redact func(string) string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if out := redact(string(raw)); out != string(raw) {
		return os.WriteFile(path, []byte(out), 0o644)
	}
	return nil
}

// consoleWriter redacts what Ginkgo's console reporter writes (spec texts,
// failures, captured output, progress reports), each write on its own:
// Ginkgo writes a spec's block whole, and holding back a line (as
// redact.Writer does) would hold back the progress dots too.
type consoleWriter struct {
	w      io.Writer
	redact func(string) string
}

func (c consoleWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(c.w, c.redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
