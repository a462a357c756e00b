package fuzz

import (
	"reflect"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator/world"
)

// pageBooks reads what decoding reads, on every page of a world full of
// edge texts (quotes, backslashes, braces in titles), and nothing of a
// body of another shape.
func TestPageBooksReadsWhatDecodingReads(t *testing.T) {
	w, err := world.New(world.Config{Seed: 9, Channels: 4, History: 5 * 24 * time.Hour, EdgeRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	acc := w.CreateAccount(world.Pro)
	pages := 0
	for cursor := ""; pages < 100; pages++ {
		body, err := w.FeedPage(acc.ID, cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		ids, last, next, ok := pageBooks(body)
		doc, _ := jsondoc.Decode(body)
		obj := doc.(map[string]any)
		events := obj["events"].([]any)
		want := make([]string, len(events))
		for i, e := range events {
			want[i] = id(e)
		}
		wantNext, _ := obj["nextCursor"].(string)
		lastDoc, _ := jsondoc.Decode(last)
		if !ok || !reflect.DeepEqual(ids, want) || next != wantNext || len(events) > 0 && !reflect.DeepEqual(lastDoc, events[len(events)-1]) {
			t.Fatalf("page %d: read %v, %q, %t; decoded %v, %q", pages, ids, next, ok, want, wantNext)
		}
		if wantNext == "" {
			break
		}
		cursor = wantNext
	}
	if pages < 5 {
		t.Fatalf("%d pages, too few to tell", pages)
	}
	for _, body := range []string{
		`{"nextCursor":null,"events":[]}`,
		`{"events":[{"createdAt":1,"id":"evt_1"}],"nextCursor":null}`,
		`{"events":[{"id":"evt_\u0031"}],"nextCursor":null}`,
		`{"events":[],"nextCursor":"a\"b"}`,
		`{"events": [], "nextCursor": null}`,
	} {
		if _, _, _, ok := pageBooks([]byte(body)); ok {
			t.Errorf("pageBooks read %s", body)
		}
	}
}
