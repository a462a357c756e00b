package fuzz_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/fuzz"
)

// An answer the schedule leaves as it is is not decoded whole: the same
// walk through a schedule that edits every page (a cap on the feed that
// it never reaches) keeps the same books: the events served, the pages
// of the walk, and the last event of a page, which a repeated-event step
// serves again.
func TestUneditedAnswersKeepTheSameBooks(t *testing.T) {
	steps := []fuzz.Step{{At: 5, Kind: fuzz.Repeated, Op: simulator.OpFeed}}
	var reports []fuzz.Report
	var walks [][]string
	for _, feedCap := range []int{-1, 1 << 30} {
		h := start(t, fuzz.World{Seed: 3, Channels: 4, History: 10 * 24 * time.Hour, FeedCap: feedCap}, steps...)
		var ids []string
		cursor := ""
		for range 100 {
			p := h.page(20, cursor)
			for _, e := range p.Events {
				ids = append(ids, e.ID)
			}
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		reports, walks = append(reports, h.sched.Snapshot()), append(walks, ids)
	}
	if len(walks[0]) < 100 {
		t.Fatalf("the walk read %d events, too few to tell", len(walks[0]))
	}
	if !reflect.DeepEqual(walks[0], walks[1]) {
		t.Errorf("the walks read other events:\n%v\n%v", walks[0], walks[1])
	}
	a, b := reports[0], reports[1]
	if !reflect.DeepEqual(a.Served, b.Served) || !reflect.DeepEqual(a.EventIDs, b.EventIDs) || a.Requests != b.Requests {
		t.Errorf("the books differ:\n%s\n---\n%s", a, b)
	}
	if len(a.Served) == 0 {
		t.Error("the repeated-event step was not served")
	}
}
