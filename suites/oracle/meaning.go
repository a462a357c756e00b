package oracle

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// The meaning of events: the Event table's Meaning column says what each
// type records, and some of it can be checked from the event alone or from
// events the feed shows side by side. A field of the wrong type is the
// schema's to judge, so each rule reads only fields of the type it expects.

// changePairs are the types whose event records a change from an old value
// to a new one: "a title that was rewritten", "a thumbnail swapped", "the
// channel changed its display name / its avatar", "crossed a milestone".
var changePairs = map[string][2]string{
	schemas.TypeTitleChanged:         {"oldTitle", "newTitle"},
	schemas.TypeThumbnailChanged:     {"oldThumbnailUrl", "newThumbnailUrl"},
	schemas.TypeChannelRenamed:       {"oldChannelTitle", "newChannelTitle"},
	schemas.TypeChannelAvatarChanged: {"oldAvatarUrl", "newAvatarUrl"},
	schemas.TypeSubscriberChange:     {"oldSubscriberCount", "newSubscriberCount"},
}

// abTests are the A/B test types: the variants' field, and for a
// conclusion the winner's.
var abTests = map[string][2]string{
	schemas.TypeTitleABTest:              {"titles", ""},
	schemas.TypeTitleABTestConcluded:     {"titles", "finalTitle"},
	schemas.TypeThumbnailABTest:          {"thumbnailUrls", ""},
	schemas.TypeThumbnailABTestConcluded: {"thumbnailUrls", "finalThumbnailUrl"},
}

// meaning judges one event by what its type means (ptr is where it is).
func (j *judging) meaning(ptr string, e event) {
	if pair, ok := changePairs[e.typ]; ok {
		old, okOld := e.raw[pair[0]]
		nw, okNew := e.raw[pair[1]]
		if okOld && okNew && sameScalar(old, nw) {
			j.fail(catalogue.EventChangeDiffers, ptr+"/"+pair[1], fmt.Sprintf("%s records a change: %s differs from %s", e.typ, pair[1], pair[0]),
				fmt.Sprintf("%s and %s both %s", pair[0], pair[1], jsondoc.Quote(encodeValue(nw), 80)))
		}
	}
	test, ok := abTests[e.typ]
	if !ok {
		return
	}
	variants, ok := stringList(e.raw[test[0]])
	if !ok {
		return
	}
	if test[1] == "" {
		if n := distinct(variants); n < 2 {
			j.fail(catalogue.EventAbVariants, ptr+"/"+test[0], fmt.Sprintf("%s: a rotation between several variants (at least two different)", e.typ),
				fmt.Sprintf("%d different of %d", n, len(variants)))
		}
		return
	}
	if final, ok := e.raw[test[1]].(string); ok && !slices.Contains(variants, final) {
		j.fail(catalogue.EventAbVariants, ptr+"/"+test[1], fmt.Sprintf("%s: the rotation settled on a winner among its %s", e.typ, test[0]),
			fmt.Sprintf("%s %s, not one of %d variants", test[1], jsondoc.Quote(final, 80), len(variants)))
	}
}

// sameScalar reports two strings or two numbers that are the same value
// (1000 and 1e3 are one number in JSON's reading; null is no old value).
func sameScalar(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		p, okP := new(big.Rat).SetString(string(x))
		q, okQ := new(big.Rat).SetString(string(y))
		return okP && okQ && p.Cmp(q) == 0
	}
	return false
}

// stringList reads an array of strings (false when it is not one).
func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func distinct(ss []string) int {
	seen := map[string]bool{}
	for _, s := range ss {
		seen[s] = true
	}
	return len(seen)
}

// members is a members_only_changed event as a switch: the state it
// switched to, when, and where it was seen.
type members struct {
	to   bool
	at   int64
	ptr  string
	resp *client.Response
}

// membersOf reads a members_only_changed event of a known video and time.
func membersOf(ptr string, e event, resp *client.Response) (members, bool) {
	if e.typ != schemas.TypeMembersOnlyChanged || e.video == "" || !e.hasTime {
		return members{}, false
	}
	to, ok := e.raw["isMembersOnly"].(bool)
	return members{to: to, at: e.createdAt, ptr: ptr, resp: resp}, ok
}

// switched judges two members_only_changed events of one video with no
// other between them in the feed, newer then older: a switch flips the
// state. Events of one time are left: their order is not known.
func (j *judging) switched(video string, newer, older members) {
	if newer.to != older.to || newer.at == older.at {
		return
	}
	var earlier []*client.Response
	if older.resp != j.resp {
		earlier = append(earlier, older.resp)
	}
	j.fail(catalogue.EventMembersSwitched, newer.ptr+"/isMembersOnly",
		fmt.Sprintf("members_only_changed of video %s switched between public and members-only: the next older one of it (%s) holds the other state", jsondoc.Quote(video, 40), older.ptr),
		fmt.Sprintf("isMembersOnly %t in both", newer.to), earlier...)
}

// pageSwitches judges a feed page's members_only_changed events and
// returns the oldest of each video on it (what the next page of its walk
// continues). above is the oldest of each video on the pages of the walk
// before it (nil for none). A page out of order (FEED-ORDER's to judge) is
// read by its events' times, and is not joined to the pages around it.
func (j *judging) pageSwitches(evs []event, above func(video string) (members, bool)) map[string]members {
	byVideo := map[string][]members{}
	var videos []string
	for i, e := range evs {
		if m, ok := membersOf(fmt.Sprintf("/events/%d", i), e, j.resp); ok {
			if byVideo[e.video] == nil {
				videos = append(videos, e.video)
			}
			byVideo[e.video] = append(byVideo[e.video], m)
		}
	}
	if !ordered(evs) {
		above = nil
		for _, ms := range byVideo {
			slices.SortStableFunc(ms, func(a, b members) int { return cmp.Compare(b.at, a.at) })
		}
	}
	oldest := map[string]members{}
	for _, v := range videos {
		ms := byVideo[v]
		if above != nil {
			if prev, ok := above(v); ok {
				j.switched(v, prev, ms[0])
			}
		}
		for i := 1; i < len(ms); i++ {
			j.switched(v, ms[i-1], ms[i])
		}
		oldest[v] = ms[len(ms)-1]
	}
	return oldest
}

// published is the first video_published event seen of a video.
type published struct {
	id   string
	at   int64
	resp *client.Response
}

// publishedOnce: an upload is new once. Two video_published events of one
// video at different times are two discoveries (at one time they may be
// one event under two ids, which the contract does not rule out).
func (m *model) publishedOnce(j *judging, ptr string, e event) {
	if e.typ != schemas.TypeVideoPublished || e.video == "" || !e.hasTime || e.id == "" {
		return
	}
	was, ok := m.published[e.video]
	if !ok {
		if len(m.published) < maxKnownEvents {
			m.published[e.video] = published{id: e.id, at: e.createdAt, resp: j.resp}
		}
		return
	}
	if was.id == e.id || was.at == e.createdAt {
		return
	}
	var earlier []*client.Response
	if was.resp != j.resp {
		earlier = append(earlier, was.resp)
	}
	j.fail(catalogue.EventPublishedOnce, ptr, fmt.Sprintf("one video_published of video %s: an upload is new once", jsondoc.Quote(e.video, 40)),
		fmt.Sprintf("video_published %s at %d, and %s at %d", jsondoc.Quote(was.id, 40), was.at, jsondoc.Quote(e.id, 40), e.createdAt), earlier...)
}
