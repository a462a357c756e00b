package probegrid

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
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

// shapedServed judges an answer to shaped ids: the contract leaves open
// exactly when an id is missing, and a video of a tracked channel may
// never show in the feed, so a VideoEntry for a shaped id is a failure
// only when it is shown not to be a video of a channel the account
// tracks: its channel is one the account's whole feed never shows.
func (pr *prober) shapedServed(ctx context.Context, resp *client.Response, ids []string) ([]string, string) {
	if resp.Status != http.StatusOK {
		return nil, ""
	}
	events, complete := pr.h.Walk(ctx, probe.Pro)
	if !complete {
		return nil, fmt.Sprintf("the Pro key's walk did not reach the end of its feed (raise --max-pages=%d): the channels an account tracks are learnt from its whole feed", pr.h.MaxPages())
	}
	tracked := map[string]bool{}
	for _, e := range events {
		tracked[e.Channel] = true
	}
	doc, err := resp.JSON()
	if err != nil {
		return nil, ""
	}
	var out []string
	for i, entry := range jsondoc.Items(doc, "/videos") {
		id, _ := jsondoc.String(entry, "/video/platformVideoId")
		channel, hasChannel := jsondoc.String(entry, "/video/channel/id")
		if !slices.Contains(ids, id) || !hasChannel || tracked[channel] {
			continue // (an entry without a channel id is the schema's to judge)
		}
		out = append(out, fmt.Sprintf("%s: /videos/%d answers %q, an id made from the feed's ids (their length and alphabet) that names no video the feed shows, as a VideoEntry of the channel %q, which the account's whole feed never shows: a video of no tracked channel",
			resp.Request, i, jsondoc.Excerpt(id, 40), jsondoc.Excerpt(strings.TrimSpace(channel), 40)))
	}
	return out, ""
}
