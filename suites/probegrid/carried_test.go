package probegrid

import (
	"bytes"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator/mutants"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/explore"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// A probe's request, written in any form the explorer's carrier may give
// it, keeps the probe's input classes as a server reads them: every class
// the cell faults read off the probe's request they read off each form (a
// form may add one: JSON's whitespace around a body pads it). A carried
// body written again without its padding once sent the whitespace probes
// as the plain ones (health-not-ok@none.first-page.whitespace survived
// the kill matrix); this holds every probe and every transformation, not
// the few requests a seed draws.
func TestCarriedProbesKeepTheirInputClass(t *testing.T) {
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := probe.Generate(cat)
	if err != nil {
		t.Fatal(err)
	}
	pro, free := "tcm_"+strings.Repeat("P", 32), "tcm_"+strings.Repeat("F", 32)
	c := explore.NewCarrier(1, map[string]string{"pro": pro, "free": free})
	auths := map[probe.Role]string{probe.Pro: client.Bearer(pro), probe.Free: client.Bearer(free), probe.None: ""}
	seen := map[string]bool{}
	forms, whitespace := 0, 0
	for _, p := range ps {
		auth, carried := auths[p.Role]
		asked := string(p.Role) + "|" + string(p.Input.Op) + "|" + p.Input.Name
		if !carried || p.Key != "" || p.Input.FromFeed || seen[asked] {
			continue // the carrier writes the requests of valid keys, and health's without one
		}
		seen[asked] = true
		req := request(p.Input, auth, "")
		want := classesOf(t, req)
		for name, form := range c.Forms(req) {
			forms++
			if p.Input.Class == probe.Whitespace {
				whitespace++
			}
			if got := classesOf(t, form); !subset(want, got) {
				t.Errorf("%s (%s, %s) carried as %s: the server reads input classes %v, the probe's request %v\n  asked: %q %q\n  sent:  %q %q",
					p.Input.Name, p.Role, p.Input.Op, name, got, want, req.Query, req.Body, form.Query, form.Body)
			}
		}
	}
	if forms < 100 || whitespace == 0 {
		t.Fatalf("only %d carried forms checked (%d of whitespace inputs): the plan or the carrier changed", forms, whitespace)
	}
}

// subset reports whether every class of a is one of b.
func subset(a, b []catalogue.Class) bool {
	for _, c := range a {
		if !slices.Contains(b, c) {
			return false
		}
	}
	return true
}

// classesOf is what the cell faults read of a request's input.
func classesOf(t *testing.T, req client.Request) []catalogue.Class {
	t.Helper()
	u, err := url.Parse(req.Path)
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = req.Query
	r, err := http.NewRequest(req.Method, u.String(), bytes.NewReader(req.Body))
	if err != nil {
		t.Fatal(err)
	}
	cs := mutants.InputClasses(r, req.Body)
	slices.Sort(cs)
	return cs
}
