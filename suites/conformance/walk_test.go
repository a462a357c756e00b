package conformance

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/suites/client"
)

// fakeFeed serves pages from a list of event ids with createdAt values,
// through a cursor that is the next index; mutate breaks it on purpose.
type fakeFeed struct {
	ids     []string
	times   []int64
	nextFor func(page, from, to int) string // nil: the index of the next page, "" at the end
	calls   int
}

func (f *fakeFeed) fetch(limit int) fetchPage {
	return func(_ context.Context, cursor string) (*client.Response, error) {
		f.calls++
		from := 0
		if cursor != "" {
			from, _ = strconv.Atoi(strings.TrimPrefix(cursor, "c"))
		}
		to := min(from+limit, len(f.ids))
		var evs []string
		for i := from; i < to; i++ {
			evs = append(evs, fmt.Sprintf(`{"id":%q,"createdAt":%d}`, f.ids[i], f.times[i]))
		}
		next := "null"
		switch {
		case f.nextFor != nil:
			if c := f.nextFor(f.calls, from, to); c != "" {
				next = strconv.Quote(c)
			}
		case to < len(f.ids):
			next = strconv.Quote("c" + strconv.Itoa(to))
		}
		body := `{"events":[` + strings.Join(evs, ",") + `],"nextCursor":` + next + `}`
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		return &client.Response{Request: client.Get("/api/public-feed", q, ""), Status: 200, Body: []byte(body)}, nil
	}
}

func newFeed(n int) *fakeFeed {
	f := &fakeFeed{}
	for i := range n {
		f.ids = append(f.ids, fmt.Sprintf("e%03d", i))
		f.times = append(f.times, int64(1_800_000_000_000-i*1000))
	}
	return f
}

func TestWalkCleanFeed(t *testing.T) {
	f := newFeed(23)
	w := walkFeed(context.Background(), "5", f.fetch(5), 50, 0)
	if !w.Complete || w.Bounded || w.Err != nil || len(w.Pages) != 5 || len(w.IDs()) != 23 {
		t.Fatalf("walk = complete %v bounded %v err %v pages %d events %d", w.Complete, w.Bounded, w.Err, len(w.Pages), len(w.IDs()))
	}
	for name, p := range map[string][]string{
		"shared ids": w.SharedIDs(), "order": w.OrderBreaks(), "size": w.SizeProblems(5),
	} {
		if len(p) != 0 {
			t.Errorf("%s: %v", name, p)
		}
	}
	// a size rule the pages break: pages of 5 are not pages of 4
	if p := w.SizeProblems(4); len(p) != 4 { // the last page (3 events) is fine
		t.Errorf("SizeProblems(4) = %v", p)
	}
}

func TestWalkFindsBreakage(t *testing.T) {
	ctx := context.Background()
	t.Run("an id two events share", func(t *testing.T) {
		f := newFeed(10)
		f.ids[5] = f.ids[4] // the first event of page 2 carries the id of the last of page 1
		w := walkFeed(ctx, "5", f.fetch(5), 50, 0)
		if r := w.SharedIDs(); len(r) != 1 || !strings.Contains(r[0], `"e004" at page 2`) {
			t.Errorf("SharedIDs = %v", r)
		}
	})
	t.Run("oldest first", func(t *testing.T) {
		f := newFeed(6)
		f.times[3] = f.times[0] + 1 // newer than the head, on page 2
		w := walkFeed(ctx, "3", f.fetch(3), 50, 0)
		if b := w.OrderBreaks(); len(b) != 1 || !strings.Contains(b[0], "across a page boundary") {
			t.Errorf("OrderBreaks = %v", b)
		}
	})
	t.Run("ties are allowed", func(t *testing.T) {
		f := newFeed(6)
		f.times[3] = f.times[2]
		if b := walkFeed(ctx, "3", f.fetch(3), 50, 0).OrderBreaks(); len(b) != 0 {
			t.Errorf("OrderBreaks = %v", b)
		}
	})
	t.Run("cursor cycle", func(t *testing.T) {
		f := newFeed(100)
		f.nextFor = func(int, int, int) string { return "c5" } // always the same page
		w := walkFeed(ctx, "5", f.fetch(5), 50, 0)
		if w.Complete || w.Err == nil || !strings.Contains(w.Err.Error(), "cursor cycle") || f.calls != 2 || w.endErr == nil {
			t.Fatalf("walk = %+v after %d calls", w.Err, f.calls)
		}
	})
	t.Run("endless fresh cursors are bounded", func(t *testing.T) {
		f := newFeed(10)
		f.nextFor = func(call, _, _ int) string { return fmt.Sprintf("c%d", call%2*5) + strings.Repeat("x", call) }
		w := walkFeed(ctx, "5", f.fetch(5), 4, 0)
		if !w.Bounded || w.Complete || len(w.Pages) != 4 {
			t.Errorf("walk = bounded %v complete %v pages %d", w.Bounded, w.Complete, len(w.Pages))
		}
	})
	t.Run("short page in the middle", func(t *testing.T) {
		f := newFeed(10)
		f.nextFor = func(call, from, to int) string {
			if to < 10 {
				return "c" + strconv.Itoa(to)
			}
			return ""
		}
		w := walkFeed(ctx, "5", f.fetch(5), 50, 0)
		if p := w.SizeProblems(6); len(p) != 1 { // page 1 has 5 events and a cursor
			t.Errorf("SizeProblems = %v", p)
		}
	})
	t.Run("bounded partial walk", func(t *testing.T) {
		w := walkFeed(ctx, "", newFeed(30).fetch(5), 0, 12)
		if !w.Bounded || len(w.Pages) != 3 {
			t.Errorf("maxEvents 12 with pages of 5: bounded %v, %d pages", w.Bounded, len(w.Pages))
		}
	})
}

func TestReadPageRejects(t *testing.T) {
	for _, tc := range []struct {
		body string
		want string
	}{
		{`[]`, "not a JSON object"},
		{`{"events":{}}`, "/events is not an array"},
		{`{"events":[],"nextCursor":""}`, "empty string"},
		{`{"events":[],"nextCursor":5}`, "neither a string nor null"},
		{`{`, "not JSON"},
	} {
		_, err := readPage(&client.Response{Request: client.Get("/api/public-feed", nil, ""), Status: 200, Body: []byte(tc.body)}, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.body, err, tc.want)
		}
	}
	_, err := readPage(&client.Response{Request: client.Get("/api/public-feed", nil, ""), Status: 429, Body: []byte(`{}`)}, 0)
	if err == nil || !strings.Contains(err.Error(), "429") {
		t.Errorf("a 429 page: %v", err)
	}
}
