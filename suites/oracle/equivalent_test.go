package oracle

import (
	"net/http"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
)

func answered(req client.Request, status int, body string) *client.Response {
	return &client.Response{Request: req, Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
}

// Two requests that mean the same get the same data, allowing for time:
// a page shifted by newer events at its head, a video newly served.
func TestEquivalentAnswersPass(t *testing.T) {
	o := newWorld().o
	plainFeed := feed("limit=3", pro)
	lower := client.Request{Method: "GET", Path: "/api/public-feed", Query: "%6Cimit=3", Header: []client.Field{{Name: "authorization", Value: "bearer " + pro}}}
	for _, c := range []struct {
		name       string
		plain, got *client.Response
	}{
		{"the same page", answered(plainFeed, 200, page("c", ev("e3", ms(3), "v"), ev("e2", ms(2), "v"), ev("e1", ms(1), "v"))),
			answered(lower, 200, page("c", ev("e3", ms(3), "v"), ev("e2", ms(2), "v"), ev("e1", ms(1), "v")))},
		{"a newer event at the head", answered(plainFeed, 200, page("c", ev("e3", ms(3), "v"), ev("e2", ms(2), "v"), ev("e1", ms(1), "v"))),
			answered(lower, 200, page("c", ev("e4", ms(4), "v"), ev("e3", ms(3), "v"), ev("e2", ms(2), "v")))},
		{"a video newly served", answered(videos(`{"videoIds":["a","b"]}`, pro), 200, videosAnswer([]string{"b"}, entry("a", channel, "T"))),
			answered(videos(`{"videoIds":["\u0061","b"]}`, pro), 200, videosAnswer(nil, entry("a", channel, "T"), entry("b", channel, "U")))},
		{"health", answered(health(""), 200, `{"status":"ok"}`), answered(health(""), 200, `{"status":"ok"}`)},
	} {
		if why, ps := o.Equivalent(c.plain, c.got, "RFC 9110 §5.1"); why != "" || len(ps) > 0 {
			t.Errorf("%s: %q %v", c.name, why, ps)
		}
	}
}

// An answer that differs from the plain request's beyond time breaks the
// rule of the data it lost; another status is a difference that breaks
// nothing by itself (the status table judges it).
func TestEquivalentAnswersDiffer(t *testing.T) {
	o := newWorld().o
	plainFeed := feed("limit=2", pro)
	other := feed("limit=%32", pro)
	for _, c := range []struct {
		name       string
		plain, got *client.Response
		want       catalogue.ID
	}{
		{"another page", answered(plainFeed, 200, page("c", ev("e3", ms(3), "v"), ev("e2", ms(2), "v"))),
			answered(other, 200, page("c", ev("e2", ms(2), "v"), ev("e1", ms(1), "v"))), catalogue.FeedPageSchema},
		{"a video no longer served", answered(videos(`{"videoIds":["a"]}`, pro), 200, videosAnswer(nil, entry("a", channel, "T"))),
			answered(videos(`{"videoIds":["\u0061"]}`, pro), 200, videosAnswer([]string{"a"})), catalogue.VideosServed},
		{"another status", answered(videos(`{"videoIds":["a"]}`, pro), 200, videosAnswer([]string{"a"})),
			answered(videos(`{"videoIds":["a"]}`, pro), 411, errBody), ""},
	} {
		why, ps := o.Equivalent(c.plain, c.got, "RFC 3986 §2.3")
		if why == "" {
			t.Errorf("%s: no difference found", c.name)
		}
		switch {
		case c.want == "" && len(ps) > 0:
			t.Errorf("%s: problems %v, want none", c.name, ps)
		case c.want != "" && (len(ps) != 1 || ps[0].Requirement != c.want):
			t.Errorf("%s: problems %v, want one of %s", c.name, ps, c.want)
		}
	}
}
