package oracle

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// Equivalent compares the answers to two requests the standards read as
// the same (metamorphic testing: a header name in another case, a value
// percent-encoded, a body in JSON escapes...), the plain one answered
// first. It returns why they differ ("" when they do not) and the
// problems the difference makes: only when both were served (200) and
// the data differs beyond what time explains (a feed page may gain newer
// events at its head in a live world; a video once served stays served).
// A status the contract allows one of them and not the other is the
// status table's to judge (Judge): here another status is a difference
// that breaks nothing, such as a 411 for a chunked body.
func (o *Oracle) Equivalent(plain, got *client.Response, statement string) (string, []Problem) {
	if plain == nil || got == nil {
		return "no answer to compare", nil
	}
	if plain.Status != got.Status {
		return fmt.Sprintf("status %d where the plain request got %d", got.Status, plain.Status), nil
	}
	if got.Status != 200 {
		return "", nil
	}
	pd, perr := plain.JSON()
	gd, gerr := got.JSON()
	if perr != nil || gerr != nil {
		return "", nil // no data to compare: the body's own rules judge it
	}
	op := opOf(got.Request.Method, got.Request.Path)
	var id catalogue.ID
	var why string
	switch op {
	case Feed:
		id, why = catalogue.FeedPageSchema, samePage(eventIDs(pd), eventIDs(gd))
	case Videos:
		id, why = catalogue.VideosServed, sameServed(videoIDs(pd, "/videos"), videoIDs(gd, "/videos"))
	case Health:
		if s, _ := jsondoc.String(gd, "/status"); s != "ok" {
			return "", nil // HEALTH-OK's to judge
		}
	}
	if why == "" {
		return "", nil
	}
	p := Problem{Requirement: id, Request: got.Request.String(),
		Expected: fmt.Sprintf("the answer the plain request %s got (%s: the two requests mean the same), allowing for time", plain.Request.String(), statement),
		Actual:   why, Evidence: []*client.Response{got, plain}}
	return why, []Problem{p}
}

// samePage: the page asked otherwise is the plain page, shifted down by
// events newer than it (ids it does not hold) at its head.
func samePage(plain, got []string) string {
	k := 0
	for k < len(got) && !slices.Contains(plain, got[k]) {
		k++
	}
	rest := got[k:]
	if len(rest) > len(plain) || !slices.Equal(rest, plain[:len(rest)]) {
		return fmt.Sprintf("events %s where the plain request got %s", short(got), short(plain))
	}
	return ""
}

// sameServed: every video the plain request got served is served again
// (a video that newly came to be tracked may join them).
func sameServed(plain, got []string) string {
	var lost []string
	for _, id := range plain {
		if !slices.Contains(got, id) {
			lost = append(lost, jsondoc.Quote(id, 40))
		}
	}
	if len(lost) > 0 {
		return fmt.Sprintf("%s not among the videos served, which the plain request got served", strings.Join(lost, ", "))
	}
	return ""
}

func eventIDs(doc any) []string {
	var out []string
	for _, e := range jsondoc.Items(doc, "/events") {
		id, _ := jsondoc.String(e, "/id")
		out = append(out, id)
	}
	return out
}

func videoIDs(doc any, ptr string) []string {
	var out []string
	for _, v := range jsondoc.Items(doc, ptr) {
		if id, ok := jsondoc.String(v, "/video/platformVideoId"); ok {
			out = append(out, id)
		}
	}
	return out
}

// short lists ids for a message, the first few.
func short(ids []string) string {
	const n = 6
	q := make([]string, 0, n)
	for _, id := range ids[:min(len(ids), n)] {
		q = append(q, jsondoc.Quote(id, 24))
	}
	s := "[" + strings.Join(q, ", ")
	if len(ids) > n {
		s += fmt.Sprintf(", … %d in all", len(ids))
	}
	return s + "]"
}
