package client_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/fixtures"
	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/client"
)

// feedOf is a FeedPage of the given events.
func feedOf(events [][]byte) []byte {
	return []byte(`{"events":[` + string(bytes.Join(events, []byte(","))) + `],"nextCursor":null}`)
}

// A document too large to validate at once is validated in pieces, with
// the same violations at the same pointers as schemas.Validate finds.
func TestLargeDocumentsValidateInPiecesAlike(t *testing.T) {
	var events [][]byte
	for _, typ := range schemas.EventTypes {
		kinds, err := fixtures.ParseKind(typ)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fixtures.Valid(fixtures.Options{Seed: 3}, kinds[0], 30) {
			events = append(events, f.JSON)
		}
	}
	for len(events) < 1500 {
		events = append(events, events...)
	}
	// break a few, far apart
	for _, i := range []int{5, 1207, 1499} {
		events[i] = []byte(`{"id":7,"type":"nope"}`)
	}
	body := feedOf(events)
	doc, _ := jsondoc.Decode(body)
	want := schemas.Validate(schemas.FeedPage, doc)
	got := (&client.Response{Body: body}).Validate(schemas.FeedPage)
	wv, gv := want.(*schemas.Error).Violations, got.(*schemas.Error).Violations
	if len(wv) == 0 || len(wv) > client.MaxViolations {
		t.Fatalf("the test document has %d violations", len(wv))
	}
	if !reflect.DeepEqual(wv, gv) {
		t.Errorf("in pieces: %d violations, whole: %d\nfirst in pieces %v\nfirst whole %v", len(gv), len(wv), gv[0], wv[0])
	}
}

// A body that fails everywhere stops at MaxViolations, quickly, and says so.
func TestValidationStopsAtMaxViolations(t *testing.T) {
	body := []byte(`{"events":[` + strings.Repeat("1,", 60_000) + `1],"nextCursor":null}`)
	start := time.Now()
	err := (&client.Response{Body: body}).Validate(schemas.FeedPage)
	vs := err.(*schemas.Error).Violations
	if len(vs) != client.MaxViolations+1 || vs[len(vs)-1].Keyword != "limit" {
		t.Fatalf("%d violations, last %v", len(vs), vs[len(vs)-1])
	}
	if jsondoc.ComparePointers(vs[0].Pointer, vs[1].Pointer) > 0 {
		t.Errorf("not in pointer order: %s, %s", vs[0].Pointer, vs[1].Pointer)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %s", took)
	}
}

// A quoted value is redacted before it is cut: no fragment of a key that
// stands at the cut.
func TestViolationValuesRedactedBeforeTheCut(t *testing.T) {
	title := strings.Repeat("t", schemas.MaxExcerpt-19-15) + key
	body := `{"events":[{"id":"e","type":"x","title":"` + title + `"}],"nextCursor":null}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) }))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, Redact: redact.New(key).String}
	resp, err := c.Send(context.Background(), client.Request{Method: "GET", Path: "/"})
	if err != nil {
		t.Fatal(err)
	}
	vs := resp.Validate(schemas.FeedPage).(*schemas.Error).Violations
	shown := false
	for _, v := range vs {
		for _, f := range redact.Fragments(key) {
			if strings.Contains(v.Value, f) {
				t.Errorf("%s holds the key fragment %q: %s", v.Pointer, f, v.Value)
			}
		}
		shown = shown || strings.Contains(v.Value, "tcm_…")
	}
	if !shown {
		t.Errorf("no violation quotes the redacted key: %v", vs)
	}
}
