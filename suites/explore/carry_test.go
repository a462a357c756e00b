package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/oracle"
)

// specLike are requests as the specs write them: every plain form a
// carrier writes otherwise, and some it must leave as asked.
func specLike(k Keys, cursor string) (carried, asIs []client.Request) {
	auth := client.Bearer(k.Pro)
	for i := 1; i <= 40; i++ {
		carried = append(carried,
			client.Request{Method: "GET", Path: "/api/public-feed", Query: fmt.Sprintf("limit=%d", i), Auth: auth},
			client.Request{Method: "GET", Path: "/api/public-feed", Query: fmt.Sprintf("limit=%d&cursor=%s", i, cursor), Auth: auth},
			client.PostJSON("/api/public/videos", fmt.Sprintf(`{"videoIds":[%q,"~carried~%d"]}`, k.Video, i), auth),
			client.PostJSON("/api/public/videos", fmt.Sprintf(`{"videoIds":["~a%d"],"videoIds":[%q]}`, i, k.Video), auth),
			client.PostJSON("/api/public/videos", fmt.Sprintf(`{"videoIds":[],"n":%d.50}`, i), auth),
			client.PostJSON("/api/public/health", fmt.Sprintf(`{"n":[%d,{"x":null}]}`, i), ""),
			client.PostJSON("/api/public/health", fmt.Sprintf(`{"m":"%d"}`, i), ""),
		)
	}
	asIs = []client.Request{
		{Method: "GET", Path: "/api/public-feed", Query: "limit=1", Auth: client.Bearer(k.Pro), Accept: "text/html"},
		{Method: "GET", Path: "/api/public-feed", Query: "limit=1", Auth: "bearer " + k.Pro},
		{Method: "GET", Path: "/api/public-feed", Query: "limit=1", Auth: client.Bearer(k.Revoked)},
		client.PostJSON("/api/public/videos", `{"videoIds":["\u0061"]}`, auth),
		client.PostJSON("/api/public/videos", `{"videoIds":["a"]} x`, auth),
		{Method: "POST", Path: "/api/public/videos", Body: []byte(`{"videoIds":["a"]}`), ContentType: "text/plain", Auth: auth},
		{Method: "GET", Path: "/api/public-feed", Query: "limit=1", Auth: auth, Header: []client.Field{{Name: "X-Forwarded-For", Value: "10.0.0.1"}}},
	}
	return carried, asIs
}

// A carried request means what the request asked means: the bundled
// simulator answers both alike, the oracle finds nothing in either; the
// same seed writes the same request, and every transformation the carrier
// may carry is carried on some request; requests in a form of their own
// are sent as asked.
func TestCarriedRequestsMeanTheAsked(t *testing.T) {
	// the limits off: every request is answered, none is a 429
	sim, err := simulator.New(simulator.Config{Seed: bundled.Seed, FeedLimit: -1, VideosLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	ctx := context.Background()
	bk, err := bundled.Provision(ctx, http.DefaultClient, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	prefix, _, _ := strings.Cut(bk.Pro, "_")
	o := oracle.New(oracle.Options{Keys: oracle.Keys{Pro: []string{bk.Pro}, Free: []string{bk.Free}, Revoked: []string{bk.Revoked}, Prefix: prefix,
		Invented: func(id string) bool { return strings.HasPrefix(id, "~") }}})
	plainC := &client.Client{BaseURL: srv.URL}
	defer plainC.Close()
	k := Keys{Pro: bk.Pro, Revoked: bk.Revoked, Video: firstVideo(ctx, plainC, bk.Pro)}
	first, err := plainC.Send(ctx, client.Request{Method: "GET", Path: "/api/public-feed", Query: "limit=2", Auth: client.Bearer(bk.Pro)})
	if err != nil {
		t.Fatal(err)
	}
	var page struct{ NextCursor string }
	_ = json.Unmarshal(first.Body, &page)
	carrier := NewCarrier(7, map[string]string{"pro": bk.Pro, "free": bk.Free})
	carrier.Start()
	c := &client.Client{BaseURL: srv.URL, Rewrite: carrier.Rewrite}
	defer c.Close()
	carried, asIs := specLike(k, page.NextCursor)
	for _, req := range carried {
		other := NewCarrier(7, map[string]string{"pro": "other-key-same-role"})
		other.Start()
		again, says := other.Rewrite(ctx, withKey(req, bk.Pro, "other-key-same-role"))
		w, said := carrier.Rewrite(ctx, req)
		if said == "" || says != said || !reflect.DeepEqual(withKey(w, bk.Pro, "other-key-same-role"), again) {
			t.Errorf("%s %s: written %q, for the same seed and role %q", req, req.Body, said, says)
		}
		want, err := plainC.Send(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Send(ctx, req)
		if err != nil {
			t.Fatalf("%s %s: %v", req, got.Rewritten, err)
		}
		if got.Rewritten == "" || got.Written == nil || !reflect.DeepEqual(got.Request, req) {
			t.Errorf("%s: the response keeps the request as asked and the one written", req)
		}
		// the evidence shows the request as written, to send it again
		if !strings.Contains(c.Transcript(got), "# written "+got.Rewritten) || c.Curl(got.AsWritten()) == c.Curl(req) {
			t.Errorf("%s written %s: the transcript or curl line shows the request as asked:\n%s\n%s", req, got.Rewritten, c.Transcript(got), c.Curl(got.AsWritten()))
		}
		if want.Status == 429 || got.Status != want.Status {
			t.Errorf("%s written %s: %d, as asked %d", req, got.Rewritten, got.Status, want.Status)
		} else if why, _ := o.Equivalent(want, got, "test"); why != "" {
			t.Errorf("%s written %s: %s", req, got.Rewritten, why)
		}
		for _, p := range o.Judge(got) {
			if strings.HasPrefix(string(p.Requirement), "RATE-") {
				continue // the limits are off: what a limiter admits is no rule here
			}
			t.Errorf("%s: %s: want %s; got %s", p.Requirement, p.Request, p.Expected, p.Actual)
		}
	}
	for _, req := range asIs {
		if w, said := carrier.Rewrite(ctx, req); said != "" || !reflect.DeepEqual(w, req) {
			t.Errorf("%s %s (%q) was written %s", req, req.Body, req.Auth[:min(len(req.Auth), 7)], said)
		}
	}
	if w, said := carrier.Rewrite(client.WithScope(ctx, "explored requests: body"), carried[0]); said != "" || !reflect.DeepEqual(w, carried[0]) {
		t.Error("an explored request was written otherwise")
	}
	reached := map[string]bool{}
	for _, o := range carrier.Outcomes() {
		reached[o.Transformation.Name+" on "+string(o.Base)] = true
	}
	for _, b := range Bases {
		for _, tr := range TransformationsOf(b) {
			if Carries(tr) && !reached[tr.Name+" on "+string(b)] {
				t.Errorf("%s on %s: never carried on %d requests", tr.Name, b, len(carried))
			}
		}
	}
}

func withKey(r client.Request, from, to string) client.Request {
	r.Auth = strings.ReplaceAll(r.Auth, from, to)
	r.Header = append([]client.Field(nil), r.Header...)
	for i := range r.Header {
		r.Header[i].Value = strings.ReplaceAll(r.Header[i].Value, from, to)
	}
	return r
}

// A server that reads one form otherwise is caught on a spec's request
// that carried it, and the problem names the transformation and its
// statement: here one that takes no media type but application/json as
// written (RFC 9110 §8.3.1: its case means nothing).
func TestCarriedFormFindsAServerThatReadsItOtherwise(t *testing.T) {
	strict := simulator.Layer{Name: "Content-Type compared as written", Wrap: func(_ *simulator.Server, op simulator.Operation, next simulator.Answerer) simulator.Answerer {
		if op != simulator.OpVideos {
			return next
		}
		return func(r *http.Request) simulator.Answer {
			if r.Header.Get("Content-Type") != "application/json" {
				return simulator.Answer{Status: 415, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"error":"unsupported","message":"JSON only"}`)}
			}
			return next(r)
		}
	}}
	sim, err := simulator.New(simulator.Config{Seed: bundled.Seed, FeedLimit: -1, VideosLimit: -1, Layers: []simulator.Layer{strict}})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	hs := httptest.NewServer(sim.Handler())
	defer hs.Close()
	url := hs.URL
	ctx := context.Background()
	keys, err := bundled.Provision(ctx, nil, url)
	if err != nil {
		t.Fatal(err)
	}
	prefix, _, _ := strings.Cut(keys.Pro, "_")
	o := oracle.New(oracle.Options{Keys: oracle.Keys{Pro: []string{keys.Pro}, Prefix: prefix, Invented: func(id string) bool { return strings.HasPrefix(id, "~") }}})
	carrier := NewCarrier(0, map[string]string{"pro": keys.Pro})
	carrier.Start()
	c := &client.Client{BaseURL: url, Rewrite: carrier.Rewrite}
	defer c.Close()
	for i := 0; i < 200; i++ {
		resp, err := c.Send(ctx, client.PostJSON("/api/public/videos", fmt.Sprintf(`{"videoIds":["~m%d"]}`, i), client.Bearer(keys.Pro)))
		if err != nil {
			t.Fatal(err)
		}
		ps := o.Judge(resp)
		if !strings.Contains(resp.Rewritten, "media-type") {
			if len(ps) > 0 {
				t.Errorf("written %q: %s %s", resp.Rewritten, ps[0].Requirement, ps[0].Actual)
			}
			continue
		}
		if len(ps) == 0 || !strings.Contains(ps[0].Expected, "media-type") || !strings.Contains(ps[0].Expected, "RFC 9110") && !strings.Contains(ps[0].Expected, "RFC 8259") {
			t.Fatalf("written %s, answered %d: problems %v", resp.Rewritten, resp.Status, ps)
		}
		return
	}
	t.Error("no request carried a media type's form")
}

// A transformation that is not the body's leaves the body's bytes as the
// spec wrote them: a probe's body padded with whitespace (an input class
// of its own) stays padded whatever is carried on it. Writing it again
// token by token once dropped the padding, and with it the probe's input
// (health-not-ok@none.first-page.whitespace survived).
func TestCarriedBodyKeepsItsBytes(t *testing.T) {
	for _, raw := range []string{" {} \n", "\t{\"videoIds\":[\"a\"]} ", "{\"n\":1.50,\"n\":2}"} {
		req := client.PostJSON("/api/public/health", raw, "")
		for _, tr := range TransformationsOf(BaseHealth) {
			d, ok := draftOf(req)
			if !ok {
				t.Fatalf("%q: no draft", raw)
			}
			tr.apply(d)
			got := string(d.request().Body)
			if strings.HasPrefix(tr.Group, "json") {
				if strings.TrimSpace(got) == got {
					t.Errorf("%s on %q: %q, no longer padded with whitespace", tr.Name, raw, got)
				}
				continue
			}
			if got != raw {
				t.Errorf("%s on %q: the body sent is %q", tr.Name, raw, got)
			}
		}
	}
}
