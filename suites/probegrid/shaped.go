package probegrid

import (
	"context"
	"slices"

	"github.com/tcmkit/tcmkit/suites/probe"
)

// Ids shaped like the target's own (the probe inputs of class shaped): a
// server may answer an id that has the platform's shape with a stub
// VideoEntry while it lists any other unknown id as missing, so the
// invented ids of the other classes, which no platform could issue, do
// not show it. These are made from the ids the Pro account's whole feed
// shows: a real id with every character moved along the alphabet the
// feed's ids use, so that it keeps their length and alphabet and names
// no video the feed shows.

// shapedIDs are the ids of a shaped input, or why none can be made.
func (pr *prober) shapedIDs(ctx context.Context) ([]string, string) {
	events, _ := pr.h.Walk(ctx, probe.Pro)
	seen := map[string]bool{}
	var ids []string
	for _, e := range events {
		if e.Video != "" && !seen[e.Video] {
			seen[e.Video] = true
			ids = append(ids, e.Video)
		}
	}
	if id, ok := shapedLike(ids, seen); ok {
		return []string{id}, ""
	}
	return nil, "the feed shows no video id to shape an id like"
}

// shapedLike is an id of the most common length among ids, of their
// alphabet, that is none of them; false when none can be made.
func shapedLike(ids []string, seen map[string]bool) (string, bool) {
	count := map[int]int{}
	var alphabet []byte
	for _, id := range ids {
		if len(id) > 32 {
			continue
		}
		count[len(id)]++
		for i := 0; i < len(id); i++ {
			if !slices.Contains(alphabet, id[i]) {
				alphabet = append(alphabet, id[i])
			}
		}
	}
	n := 0
	for l, c := range count {
		if c > count[n] || c == count[n] && l < n {
			n = l
		}
	}
	if n == 0 || len(alphabet) < 2 {
		return "", false
	}
	slices.Sort(alphabet)
	for _, id := range ids {
		if len(id) != n {
			continue
		}
		// every character moved by k along the alphabet: far from the
		// id it comes from, however densely the target numbers its ids
		for k := len(alphabet) / 2; k < len(alphabet)/2+len(alphabet); k++ {
			b := []byte(id)
			for i := range b {
				b[i] = alphabet[(slices.Index(alphabet, b[i])+k)%len(alphabet)]
			}
			if s := string(b); !seen[s] {
				return s, true
			}
		}
	}
	return "", false
}
