package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"date":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 MST") },
	"secs":   func(f float64) string { return fmt.Sprintf("%.1f s", f) },
	"msecs":  func(f float64) string { return fmt.Sprintf("%.0f ms", f*1000) },
	"join":   strings.Join,
	"upper":  func(s fmt.Stringer) string { return strings.ToUpper(s.String()) },
	"cls":    func(s string) string { return strings.ReplaceAll(s, " ", "-") },
	"anchor": anchor,
	"docURL": func() string { return catalogue.DocURL },
	"docFor": func(id string) string { return catalogue.DocLink(catalogue.ID(id)) },
	"first":  firstLine,
	"sorted": sortedKeys,
	"checkedBy": func(v htmlView, specs []string) checkedView {
		return checkedView{Failed: v.FailedNames, Prefix: v.Prefix, Specs: specs}
	},
	"short": func(prefix, name string) string { return strings.TrimPrefix(name, prefix) },
	"failedOf": func(failed map[string]bool, names []string) []string {
		var out []string
		for _, n := range names {
			if failed[n] {
				out = append(out, n)
			}
		}
		return out
	},
}).Parse(htmlSource))

// HTML renders the report as one self-contained page: inline CSS, no
// scripts, no external assets, every value escaped by html/template.
func (r Report) HTML() ([]byte, error) {
	var b bytes.Buffer
	v := htmlView{Report: r, Failed: r.Failures(), Tally: r.tally(), FailedNames: map[string]bool{}, Prefix: r.commonPrefix()}
	for _, s := range v.Failed {
		v.FailedNames[s.Name] = true
	}
	for _, q := range r.Requirements {
		if q.Kind == catalogue.Open {
			v.Open = append(v.Open, q)
		} else {
			v.Must = append(v.Must, q)
		}
		if q.Result == ResultFailed {
			v.FailedReqs = append(v.FailedReqs, q)
		}
	}
	if err := htmlTemplate.Execute(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type htmlView struct {
	Report
	Failed      []Spec
	FailedNames map[string]bool
	FailedReqs  []Requirement
	Must, Open  []Requirement
	Tally       []resultCount
	Prefix      string // leading words every spec name shares, left out on screen
}

// checkedView is what the "checked" template shows: the specs that check a
// requirement, failed ones first and linked to their failure.
type checkedView struct {
	Failed map[string]bool
	Prefix string
	Specs  []string
}

type resultCount struct {
	Result Result
	N      int
}

// tally counts requirements per result, in a fixed order.
func (r Report) tally() []resultCount {
	var out []resultCount
	for _, res := range []Result{ResultPassed, ResultFailed, ResultBlocked, ResultSkipped, ResultNotCovered, ResultNotApplicable} {
		n := 0
		for _, q := range r.Requirements {
			if q.Result == res {
				n++
			}
		}
		if n > 0 {
			out = append(out, resultCount{res, n})
		}
	}
	return out
}

func (o Outcome) String() string { return string(o) }

// anchor turns a spec name into a fragment id, stable for one report.
func anchor(name string) string {
	var b strings.Builder
	b.WriteString("spec-")
	for _, c := range strings.ToLower(name) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// commonPrefix is the leading words every spec's name shares (the suite's
// top-level container, typically), up to and including a space; "" when
// there are fewer than two specs or nothing is shared.
func (r Report) commonPrefix() string {
	if len(r.Specs) < 2 {
		return ""
	}
	p := r.Specs[0].Name
	for _, s := range r.Specs[1:] {
		for !strings.HasPrefix(s.Name, p) {
			p = p[:len(p)-1]
		}
	}
	i := strings.LastIndexByte(p, ' ')
	if i < 0 {
		return ""
	}
	p = p[:i+1]
	for _, s := range r.Specs {
		if s.Name == p || strings.TrimSpace(strings.TrimPrefix(s.Name, p)) == "" {
			return "" // a name would vanish
		}
	}
	return p
}
