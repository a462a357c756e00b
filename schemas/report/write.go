package report

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tcmkit/tcmkit/schemas/outfile"
)

// The file names WriteFiles writes into its directory.
const (
	JSONFile     = "conformance-report.json"
	MarkdownFile = "conformance-report.md"
	HTMLFile     = "conformance-report.html"
	// A client report's (Kind KindClient); it has a JUnit form too.
	ClientJSONFile     = "client-report.json"
	ClientMarkdownFile = "client-report.md"
	ClientHTMLFile     = "client-report.html"
	ClientJUnitFile    = "client-report.junit.xml"
)

// renderedFile is one form of a report, and its file name.
type renderedFile struct {
	name   string
	render func() ([]byte, error)
}

// files are the forms WriteFiles writes: JSON, Markdown and HTML, and for
// a client report JUnit XML too (the suite's JUnit is Ginkgo's own).
func (r Report) files() []renderedFile {
	if r.Kind == KindClient {
		return []renderedFile{{ClientJSONFile, r.JSON}, {ClientMarkdownFile, r.Markdown}, {ClientHTMLFile, r.HTML}, {ClientJUnitFile, r.JUnit}}
	}
	return []renderedFile{{JSONFile, r.JSON}, {MarkdownFile, r.Markdown}, {HTMLFile, r.HTML}}
}

// WriteFiles writes the JSON, Markdown and HTML forms into dir (created if
// needed), and JUnit XML for a client report. redact is applied to every
// string of the report before it is rendered, and to each rendered file,
// so a secret the suite forgot to redact still does not reach the disk;
// nil means no redaction. It tries every file even when one fails, and
// reports every error.
func (r Report) WriteFiles(dir string, redact func(string) string) error {
	return r.WriteFilesContext(context.Background(), dir, redact)
}

// WriteFilesContext is WriteFiles within ctx: a report file that is a FIFO
// nobody reads is waited for until ctx ends. Each file is written as
// package outfile writes what a user names: whole or not at all, a link
// followed, a FIFO or a device written through, never replaced.
func (r Report) WriteFilesContext(ctx context.Context, dir string, redact func(string) string) error {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	r = r.mapStrings(redact)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var errs []error
	for _, f := range r.files() {
		b, err := f.render()
		if err != nil {
			errs = append(errs, fmt.Errorf("report: render %s: %w", f.name, err))
			continue
		}
		if err := outfile.Write(ctx, filepath.Join(dir, f.name), []byte(redact(string(b))), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("report: %w", err))
		}
	}
	return errors.Join(errs...)
}

//go:embed report.schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of the JSON form.
func Schema() []byte { return bytes.Clone(schemaJSON) }

// JSON renders the machine-readable form, described by Schema.
func (r Report) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // keep transcripts greppable: "<" stays "<"
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// mapStrings returns a deep copy of r with f applied to every string,
// map keys included.
func (r Report) mapStrings(f func(string) string) Report {
	strs := func(in []string) []string {
		if in == nil {
			return nil
		}
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = f(s)
		}
		return out
	}
	out := r
	out.Kind = f(r.Kind)
	out.Target = f(r.Target)
	out.SuiteVersion = f(r.SuiteVersion)
	out.Config = make(map[string]string, len(r.Config))
	for k, v := range r.Config {
		out.Config[f(k)] = f(v)
	}
	out.Errors = strs(r.Errors)
	out.UnknownRequirements = strs(r.UnknownRequirements)
	out.Features = make([]FeatureCounts, len(r.Features))
	for i, fc := range r.Features {
		fc.Feature = f(fc.Feature)
		out.Features[i] = fc
	}
	out.Requirements = make([]Requirement, len(r.Requirements))
	for i, q := range r.Requirements {
		q.ID, q.Feature, q.Section, q.Text = f(q.ID), f(q.Feature), f(q.Section), f(q.Text)
		q.SimulatorChoice, q.Reason = f(q.SimulatorChoice), f(q.Reason)
		q.Kind = typed(f, q.Kind)
		q.Result = typed(f, q.Result)
		q.Specs = strs(q.Specs)
		q.Needs = strs(q.Needs)
		out.Requirements[i] = q
	}
	if r.Unverified != nil {
		out.Unverified = make([]Unverified, len(r.Unverified))
		for i, u := range r.Unverified {
			out.Unverified[i] = Unverified{ID: f(u.ID), Why: f(u.Why), Reason: f(u.Reason), Needs: strs(u.Needs)}
		}
	}
	out.Specs = make([]Spec, len(r.Specs))
	for i, s := range r.Specs {
		s.Name, s.Node, s.GinkgoState, s.SkipReason = f(s.Name), f(s.Node), f(s.GinkgoState), f(s.SkipReason)
		s.Needs = f(s.Needs)
		s.State = typed(f, s.State)
		s.Features = strs(s.Features)
		s.Requirements = strs(s.Requirements)
		s.OtherLabels = strs(s.OtherLabels)
		if s.Failure != nil {
			fl := *s.Failure
			fl.Message, fl.Location, fl.Transcript = f(fl.Message), f(fl.Location), f(fl.Transcript)
			fl.Rerun = f(fl.Rerun)
			if fl.Problems != nil {
				fl.Problems = slices.Clone(fl.Problems)
				for i, p := range fl.Problems {
					fl.Problems[i] = Problem{Requirement: f(p.Requirement), Request: f(p.Request), Pointer: f(p.Pointer), Expected: f(p.Expected), Actual: f(p.Actual)}
				}
			}
			if fl.Evidence != nil {
				fl.Evidence = slices.Clone(fl.Evidence)
				for i, x := range fl.Evidence {
					fl.Evidence[i] = Exchange{Request: f(x.Request), Curl: f(x.Curl), Transcript: f(x.Transcript)}
				}
			}
			s.Failure = &fl
		}
		out.Specs[i] = s
	}
	out.Outcome = typed(f, r.Outcome)
	return out
}

func typed[T ~string](f func(string) string, v T) T { return T(f(string(v))) }
