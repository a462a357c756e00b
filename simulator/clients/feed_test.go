package clients

import (
	"bytes"
	"testing"
)

// A FeedPage's nextCursor and createdAt span are read without decoding
// the page; what is not a page reads as none.
func TestPageReading(t *testing.T) {
	for _, tc := range []struct {
		body, next string
		ok         bool
	}{
		{`{"events":[],"nextCursor":null}`, "", true},
		{`{"events":[],"nextCursor":"abc"}` + "\n", "abc", true},
		{`{"nextCursor" : "a\u0062c" , "events":[]}`, "", false}, // not the last member: not read
		{`{"events":[],"nextCursor":"a\u0062c"}`, "abc", true},   // escapes decoded
		{`{"events":[{"title":"\"nextCursor\":\"x\""}],"nextCursor":"y"}`, "y", true},
		{`{"events":[],"nextCur`, "", false}, // cut
		{`[]`, "", false},
		{``, "", false},
	} {
		next, ok := nextCursor([]byte(tc.body))
		if next != tc.next || ok != tc.ok {
			t.Errorf("nextCursor(%s) = %q, %v; want %q, %v", tc.body, next, ok, tc.next, tc.ok)
		}
	}
	newest, oldest, ok := pageSpan([]byte(`{"events":[{"id":"a","createdAt":300},{"id":"b","createdAt": 100}],"nextCursor":null}`))
	if newest != 300 || oldest != 100 || !ok {
		t.Errorf("pageSpan: %d %d %v", newest, oldest, ok)
	}
	if _, _, ok := pageSpan([]byte(`{"events":[],"nextCursor":null}`)); ok {
		t.Error("pageSpan of a page without events")
	}
}

func TestMemberSearch(t *testing.T) {
	sep := []byte(createdAt)
	for _, n := range []int{0, 1, 5, 1000, 1023, 1024, 1025, 3000, 70000} {
		for _, at := range []int{-1, 0, n / 2, n - len(sep)} {
			body := bytes.Repeat([]byte(`A"createdAt"A`), n/13+1)[:n]
			if at >= 0 && at+len(sep) <= n {
				copy(body[at:], sep)
				if at > 0 {
					copy(body[0:], sep) // an earlier one too
				}
			}
			if got, want := lastMember(body), bytes.LastIndex(body, sep); got != want {
				t.Errorf("n=%d at=%d: lastMember %d, bytes.LastIndex %d", n, at, got, want)
			}
			if got, want := indexMember(body, 0), bytes.Index(body, sep); got != want {
				t.Errorf("n=%d at=%d: indexMember %d, bytes.Index %d", n, at, got, want)
			}
		}
	}
}
