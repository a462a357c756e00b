package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/openapi"
)

func TestParseFaults(t *testing.T) {
	table := "FAULT                 BREAKS                 WHAT IT DOES\n" +
		"count-negative        COUNT-NONNEG-OR-NULL   likeCount is -1\n" +
		"\n" +
		"wrong-content-type    CONTENT-TYPE-JSON      feed pages are text/plain\n" +
		"\n" +
		"A cell fault is FAULT@ROLE.SHAPE.CLASS: the requirement's base fault confined to requests of one cell.\n" +
		"  FAULT: count-negative, wrong-content-type\n  ROLE: pro, free\n"
	got := parseFaults(table)
	if want := []string{"count-negative", "wrong-content-type"}; !slices.Equal(got, want) {
		t.Errorf("parseFaults = %q, want %q", got, want)
	}
	if got := parseFaults("no table here\n"); got != nil {
		t.Errorf("parseFaults without a header = %q", got)
	}
}

func TestPrismVerdict(t *testing.T) {
	problem := http.Header{"Content-Type": {"application/problem+json"}}
	flagged, vs := prismVerdict(problem, []byte(`{"type":"https://stoplight.io/prism/errors#VIOLATIONS","validation":[{"location":["response","body","events","0"],"code":"required","message":"must have required property 'oldTitle'"}]}`))
	if !flagged || len(vs) != 1 || !vs[0].inBody() {
		t.Errorf("a VIOLATIONS problem: flagged %v, %+v", flagged, vs)
	}
	// Prism's own refusal of a request is a problem too, but no flag.
	if flagged, _ := prismVerdict(problem, []byte(`{"type":"https://stoplight.io/prism/errors#UNAUTHORIZED"}`)); flagged {
		t.Error("an UNAUTHORIZED problem counted as a flag")
	}
	// A warning passes the answer through with sl-violations.
	if flagged, vs := prismVerdict(http.Header{"Sl-Violations": {`[{"location":["response"],"severity":"Warning"}]`}}, []byte(`{}`)); !flagged || vs[0].inBody() {
		t.Errorf("sl-violations: flagged %v, %+v", flagged, vs)
	}
	if flagged, _ := prismVerdict(http.Header{"Content-Type": {"application/json"}}, []byte(`{"events":[]}`)); flagged {
		t.Error("a plain answer counted as a flag")
	}
}

func TestResourceOf(t *testing.T) {
	for _, tc := range []struct {
		op     string
		status int
		want   schemas.Resource
	}{
		{"feed", 200, schemas.FeedPage},
		{"videos", 200, schemas.VideosResponse},
		{"health", 200, schemas.HealthBody},
		{"feed", 429, schemas.ErrorBody},
		{"health", 503, schemas.ErrorBody},
		{"feed", 204, ""},
	} {
		if got := resourceOf(tc.op, tc.status); got != tc.want {
			t.Errorf("resourceOf(%s, %d) = %q, want %q", tc.op, tc.status, got, tc.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	comps, err := openapi.Build(schemas.FS())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Compile(comps)
	if err != nil {
		t.Fatal(err)
	}
	j := judge{doc: doc, names: map[schemas.Resource]string{}}
	for _, c := range comps {
		if c.EventType == "" {
			j.names[c.Resource] = c.Name
		}
	}
	const goodPage, badPage = `{"events":[],"nextCursor":null}`, `{"events":[]}`
	bodyViolation := []violation{{Location: []string{"response", "body"}, Message: "must have required property 'nextCursor'"}}
	mediaViolation := []violation{{Location: []string{"response"}, Message: "media type"}, {Location: []string{"response", "body"}, Message: "must be object"}}
	answer := func(body, contentType string) *upstreamAnswer {
		return &upstreamAnswer{Status: 200, ContentType: contentType, Body: []byte(body)}
	}
	for _, tc := range []struct {
		name  string
		fault string
		ex    exchange
		want  string // a substring of the one failure; "" for none
	}{
		{"clean", "", exchange{Upstream: answer(goodPage, "application/json")}, ""},
		{"faultless flagged", "", exchange{Upstream: answer(goodPage, "application/json"), Flagged: true, Violations: bodyViolation}, "Prism flags the faultless simulator"},
		{"faultless breaks the schema", "", exchange{Upstream: answer(badPage, "application/json"), Flagged: true, Violations: bodyViolation}, "Prism flags the faultless"},
		{"schema fault flagged", "f", exchange{Upstream: answer(badPage, "application/json"), Flagged: true, Violations: bodyViolation}, ""},
		{"schema fault missed", "f", exchange{Upstream: answer(badPage, "application/json")}, "Prism does not flag"},
		{"valid body flagged", "f", exchange{Upstream: answer(goodPage, "application/json"), Flagged: true, Violations: bodyViolation}, "flags a 200 body that the validator accepts"},
		{"valid body of another media type", "f", exchange{Upstream: answer(goodPage, "text/plain"), Flagged: true, Violations: mediaViolation}, ""},
		{"Prism refused a faultless request", "", exchange{Status: 422}, "Prism answered 422 by itself"},
		{"Prism refused a request of a fault", "f", exchange{Status: 422}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := tc.ex
			ex.Operation, ex.Method, ex.Target, ex.Label = "feed", "GET", schemas.PathFeed, tc.name
			fails := j.evaluate(&runResult{name: tc.fault, exchanges: []*exchange{&ex}})
			if tc.fault == "" {
				// The faultless run also reports what it did not reach.
				fails = slices.DeleteFunc(fails, func(f string) bool { return strings.Contains(f, "was reached") || strings.Contains(f, "was served") })
			}
			switch {
			case tc.want == "" && len(fails) > 0:
				t.Errorf("want no failure, got %q", fails)
			case tc.want != "" && (len(fails) != 1 || !strings.Contains(fails[0], tc.want)):
				t.Errorf("want one failure containing %q, got %q", tc.want, fails)
			}
		})
	}
}
