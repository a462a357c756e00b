package explore

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/suites/bundled"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/oracle"
)

// Every transformation names its standard's statement, and rewrites each
// request it applies to.
func TestTransformationsAreListed(t *testing.T) {
	statement := regexp.MustCompile(`^RFC [0-9]{4} §[0-9]+(\.[0-9]+)*$`)
	seen := map[string]bool{}
	for _, tr := range Transformations() {
		if seen[tr.Name] || tr.Name == "" {
			t.Errorf("%q: a name empty or used twice", tr.Name)
		}
		seen[tr.Name] = true
		if !statement.MatchString(tr.Statement) || tr.Text == "" || tr.Group == "" || len(tr.On) == 0 {
			t.Errorf("%s: statement %q, text %q, group %q, on %v", tr.Name, tr.Statement, tr.Text, tr.Group, tr.On)
		}
		for _, b := range tr.On {
			plain, _ := Plain(b, keys)
			got, ok := Transformed(b, keys, []Transformation{tr})
			if !ok || reflect.DeepEqual(plain, got) {
				t.Errorf("%s on %s: the request is not rewritten", tr.Name, b)
			}
		}
	}
}

// A pack takes at most one transformation of a group, and every
// transformation of a base is in exactly one pack.
func TestPacksHoldOneOfAGroup(t *testing.T) {
	for _, b := range Bases {
		in := map[string]int{}
		for _, p := range Packs(b) {
			groups := map[string]bool{}
			for _, tr := range p {
				if groups[tr.Group] {
					t.Errorf("%s: two of group %s in one pack", b, tr.Group)
				}
				groups[tr.Group] = true
				in[tr.Name]++
			}
		}
		for _, tr := range TransformationsOf(b) {
			if in[tr.Name] != 1 {
				t.Errorf("%s: %s in %d packs", b, tr.Name, in[tr.Name])
			}
		}
	}
}

func judgeOnce(o *oracle.Oracle, req client.Request, status int, body string) []oracle.Problem {
	return o.Judge(&client.Response{Request: req, Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
}

func newOracle() *oracle.Oracle {
	return oracle.New(oracle.Options{Keys: oracle.Keys{Pro: []string{keys.Pro}, Free: []string{keys.Free}, Revoked: []string{keys.Revoked}, Prefix: "tcm",
		Invented: func(id string) bool { return strings.Contains(id, "~") }}})
}

// The oracle reads each transformed request as the plain one: the plain
// answer passes, and a refusal of what the standards make the same
// request fails (a server that reads it otherwise is caught).
func TestTransformedRequestsMeanThePlainOne(t *testing.T) {
	ok := map[Base]string{
		BaseFeed:   `{"events":[],"nextCursor":null}`,
		BaseVideos: `{"videos":[],"missingVideoIds":["~explored~"]}`,
		BaseHealth: `{"status":"ok"}`,
	}
	k := Keys{Pro: keys.Pro}
	for _, b := range Bases {
		for _, p := range append(Packs(b), nil) {
			for _, tr := range p {
				req, _ := Transformed(b, k, []Transformation{tr})
				if ps := judgeOnce(newOracle(), req, 200, ok[b]); len(ps) > 0 {
					t.Errorf("%s, %s: the plain answer fails: %v", b, tr.Name, ps)
				}
				refused := 401
				if b == BaseHealth {
					refused = 500
				}
				if ps := judgeOnce(newOracle(), req, refused, `{"error":"x","message":"y"}`); len(ps) == 0 {
					t.Errorf("%s, %s: refused with %d, and the oracle finds nothing", b, tr.Name, refused)
				}
			}
			req, _ := Transformed(b, k, p)
			if ps := judgeOnce(newOracle(), req, 200, ok[b]); len(ps) > 0 {
				t.Errorf("%s, a pack of %d: the plain answer fails: %v", b, len(p), ps)
			}
		}
	}
}

// The bundled simulator answers every transformed request, alone and
// packed, as it answers the plain one: the oracle finds nothing and the
// answers are equivalent.
func TestSimulatorAnswersTransformedAlike(t *testing.T) {
	for _, run := range []struct {
		b      Base
		packed bool
	}{{BaseFeed, false}, {BaseFeed, true}, {BaseVideos, false}, {BaseVideos, true}, {BaseHealth, false}, {BaseHealth, true}} {
		b := run.b
		// a simulator for each, so that no run meets the rate limit
		t.Run(fmt.Sprintf("%s, packed %v", b, run.packed), func(t *testing.T) {
			srv, err := bundled.Start()
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			ctx := context.Background()
			bk, err := bundled.Provision(ctx, http.DefaultClient, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			prefix, _, _ := strings.Cut(bk.Pro, "_")
			o := oracle.New(oracle.Options{Keys: oracle.Keys{Pro: []string{bk.Pro}, Free: []string{bk.Free}, Prefix: prefix}})
			c := &client.Client{BaseURL: srv.URL, Observe: func(_ context.Context, r *client.Response) {
				for _, p := range o.Judge(r) {
					t.Errorf("%s: %s: want %s; got %s", p.Requirement, p.Request, p.Expected, p.Actual)
				}
			}}
			defer c.Close()
			k := Keys{Pro: bk.Pro, Video: firstVideo(ctx, c, bk.Pro)}
			plainReq, _ := Plain(b, k)
			plain, err := c.Send(ctx, plainReq)
			if err != nil || plain.Status != 200 {
				t.Fatalf("the plain request: %v %v", plain, err)
			}
			sets := Packs(b)
			if !run.packed {
				sets = nil
				for _, tr := range TransformationsOf(b) {
					sets = append(sets, []Transformation{tr})
				}
			}
			for _, set := range sets {
				req, _ := Transformed(b, k, set)
				got, err := c.Send(ctx, req)
				if err != nil {
					t.Fatalf("%s: %v", setNames(set), err)
				}
				if why, _ := o.Equivalent(plain, got, "test"); why != "" {
					t.Errorf("%v: answered otherwise: %s", setNames(set), why)
				}
			}
		})
	}
}

func setNames(ts []Transformation) string {
	var n []string
	for _, tr := range ts {
		n = append(n, tr.Name)
	}
	return strings.Join(n, "+")
}

// firstVideo is a video the key's feed shows.
func firstVideo(ctx context.Context, c *client.Client, key string) string {
	resp, err := c.Send(ctx, client.Request{Method: "GET", Path: "/api/public-feed", Query: "limit=50", Auth: "Bearer " + key})
	if err != nil {
		return ""
	}
	doc, _ := resp.JSON()
	evs, _ := doc.(map[string]any)["events"].([]any)
	for _, e := range evs {
		if v, ok := e.(map[string]any)["video"].(map[string]any); ok {
			return fmt.Sprint(v["platformVideoId"])
		}
	}
	return ""
}

// Only unreserved characters are percent-encoded: an encoded reserved
// character (a "+" or "/" in a cursor) would mean something else.
func TestPercentEncodesUnreservedOnly(t *testing.T) {
	for in, want := range map[string]string{"5": "%35", "a+b/c%2Fd": "%61+%62/%63%2F%64", "x-._~": "%78%2D%2E%5F%7E"} {
		if got := percentUpper(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
