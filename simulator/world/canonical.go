package world

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tcmkit/tcmkit/schemas"
)

// The documents of the API as a recorder saw them, read and written
// again in the kit's own shape.

// obsChannel is a ChannelRef as shown.
type obsChannel struct {
	ID         string  `json:"id"`
	PlatformID string  `json:"platformChannelId"`
	Title      string  `json:"title"`
	Thumb      *string `json:"thumbnailUrl"`
}

// obsVideo is a VideoRef, VideoStats or VideoSummary as shown.
type obsVideo struct {
	ID          string      `json:"platformVideoId"`
	Title       string      `json:"currentTitle"`
	Thumb       string      `json:"currentThumbnailUrl"`
	PublishedAt int64       `json:"publishedAt"`
	MembersOnly *bool       `json:"isMembersOnly"`
	Views       *int64      `json:"viewCount"`
	Likes       *int64      `json:"likeCount"`
	Comments    *int64      `json:"commentCount"`
	Channel     *obsChannel `json:"channel"`
}

type obsEvent struct {
	ID        string     `json:"id"`
	CreatedAt int64      `json:"createdAt"`
	Type      string     `json:"type"`
	Channel   obsChannel `json:"channel"`
	Video     *obsVideo  `json:"video"`
	OldTitle  string     `json:"oldTitle"`
	NewTitle  string     `json:"newTitle"`
	OldThumb  string     `json:"oldThumbnailUrl"`
	NewThumb  string     `json:"newThumbnailUrl"`
	Titles    []string   `json:"titles"`
	Thumbs    []string   `json:"thumbnailUrls"`
	Final     string     `json:"finalTitle"`
	FinalTh   string     `json:"finalThumbnailUrl"`
	Members   bool       `json:"isMembersOnly"`
	OldSubs   *int64     `json:"oldSubscriberCount"`
	NewSubs   int64      `json:"newSubscriberCount"`
	OldChan   string     `json:"oldChannelTitle"`
	NewChan   string     `json:"newChannelTitle"`
	OldAvatar string     `json:"oldAvatarUrl"`
	NewAvatar string     `json:"newAvatarUrl"`
	raw       []byte     // the canonical encoding
}

type obsSample struct {
	Views     *int64 `json:"viewCount"`
	Likes     *int64 `json:"likeCount"`
	Comments  *int64 `json:"commentCount"`
	CreatedAt int64  `json:"createdAt"`
}

type obsEntry struct {
	Video       obsVideo          `json:"video"`
	FirstSeenAt int64             `json:"firstSeenAt"`
	Events      []json.RawMessage `json:"events"`
	Samples     []obsSample       `json:"statSamples"`
}

// CanonicalEvent checks an event against the contract and encodes it as
// this kit does: its key order, its escapes, no member the contract does
// not name. A recording of any conforming server is served in the kit's
// own shape; changed says whether the bytes differ from raw.
func CanonicalEvent(raw []byte) (canon []byte, changed bool, err error) {
	e, err := parseEvent(raw)
	if err != nil {
		return nil, false, err
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, raw)
	return e.raw, !bytes.Equal(compact.Bytes(), e.raw), nil
}

// parseEvent reads an event a recorder was shown: it validates, and its
// times are within MinTime..MaxTime (a world holds no other).
func parseEvent(raw []byte) (*obsEvent, error) {
	if err := schemas.ValidateJSON(schemas.Event, raw); err != nil {
		return nil, err
	}
	var e obsEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, err
	}
	if !TimeInRange(e.CreatedAt) {
		return nil, timeError("createdAt", e.CreatedAt)
	}
	if e.Video != nil && !TimeInRange(e.Video.PublishedAt) {
		return nil, timeError("video.publishedAt", e.Video.PublishedAt)
	}
	e.raw = e.encode()
	return &e, nil
}

// parseEntry reads a VideoEntry a recorder was shown, as parseEvent an
// event: it validates, and its times are within range; its events are
// left to parseEvent.
func parseEntry(raw []byte) (*obsEntry, error) {
	if err := schemas.ValidateJSON(schemas.VideoEntry, raw); err != nil {
		return nil, err
	}
	var en obsEntry
	if err := json.Unmarshal(raw, &en); err != nil {
		return nil, err
	}
	for _, t := range []struct {
		what string
		ms   int64
	}{{"firstSeenAt", en.FirstSeenAt}, {"video.publishedAt", en.Video.PublishedAt}} {
		if !TimeInRange(t.ms) {
			return nil, timeError(t.what, t.ms)
		}
	}
	for i, sm := range en.Samples {
		if !TimeInRange(sm.CreatedAt) {
			return nil, timeError(fmt.Sprintf("statSamples[%d].createdAt", i), sm.CreatedAt)
		}
	}
	return &en, nil
}

// CheckEntry says whether a VideoEntry a recorder was shown can be part of
// a recorded world (Recorded): it validates, and every time in it, its
// events' too, is within MinTime..MaxTime. A recorder asks as each answer
// comes, so that what no world holds stops it at once, named.
func CheckEntry(raw []byte) error {
	en, err := parseEntry(raw)
	if err != nil {
		return err
	}
	for j, ev := range en.Events {
		if _, err := parseEvent(ev); err != nil {
			return fmt.Errorf("event %d%s: %w", j, idOf(ev), err)
		}
	}
	return nil
}

// idOf is " (id X)" for an event whose id can be read, for messages.
func idOf(raw []byte) string {
	var e struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(raw, &e) != nil || e.ID == nil {
		return ""
	}
	return fmt.Sprintf(" (id %s)", short(fmt.Sprint(e.ID)))
}

func (c *obsChannel) encode(b []byte) []byte {
	ch := channel{ID: c.ID, PlatformID: c.PlatformID, Title: c.Title}
	if c.Thumb != nil {
		ch.Avatar = *c.Thumb
	}
	ch.encodeRef()
	return append(b, ch.ref...)
}

// state is the video as the world holds it, from what was shown.
func (v *obsVideo) state() *video {
	out := &video{ID: v.ID, Title: v.Title, Thumb: v.Thumb, PublishedAt: v.PublishedAt}
	if v.MembersOnly != nil {
		out.MembersOnly = *v.MembersOnly
	}
	out.Views, out.Likes, out.Comments, out.Hidden = counts(v.Views, v.Likes, v.Comments)
	return out
}

// counts are shown counters as values and hidden flags.
func counts(views, likes, comments *int64) (v, l, c int64, hidden uint8) {
	for i, p := range []*int64{views, likes, comments} {
		n := int64(0)
		if p == nil {
			hidden |= 1 << i
		} else {
			n = *p
		}
		switch i {
		case 0:
			v = n
		case 1:
			l = n
		default:
			c = n
		}
	}
	return v, l, c, hidden
}

func (e *obsEvent) encode() []byte {
	b := appendKey([]byte{'{'}, "id", true)
	b = appendString(b, e.ID)
	b = appendKey(b, "createdAt", false)
	b = appendInt(b, e.CreatedAt)
	b = appendKey(b, "type", false)
	b = appendString(b, e.Type)
	b = appendKey(b, "channel", false)
	b = e.Channel.encode(b)
	if e.Video != nil && !schemas.IsChannelLevel(e.Type) {
		v := e.Video.state()
		if e.Type == schemas.TypeVideoPublished {
			b = appendKey(b, "video", false)
			b = append(appendStats(append(b, '{'), v), '}')
		} else {
			b = appendVideoRef(b, v)
		}
	}
	str := func(k, v string) {
		b = appendKey(b, k, false)
		b = appendString(b, v)
	}
	switch e.Type {
	case schemas.TypeTitleChanged:
		str("oldTitle", e.OldTitle)
		str("newTitle", e.NewTitle)
	case schemas.TypeThumbnailChanged:
		str("oldThumbnailUrl", e.OldThumb)
		str("newThumbnailUrl", e.NewThumb)
	case schemas.TypeTitleABTest, schemas.TypeTitleABTestConcluded:
		b = appendStrings(appendKey(b, "titles", false), e.Titles)
		if e.Type == schemas.TypeTitleABTestConcluded {
			str("finalTitle", e.Final)
		}
	case schemas.TypeThumbnailABTest, schemas.TypeThumbnailABTestConcluded:
		b = appendStrings(appendKey(b, "thumbnailUrls", false), e.Thumbs)
		if e.Type == schemas.TypeThumbnailABTestConcluded {
			str("finalThumbnailUrl", e.FinalTh)
		}
	case schemas.TypeMembersOnlyChanged:
		b = appendBool(appendKey(b, "isMembersOnly", false), e.Members)
	case schemas.TypeSubscriberChange:
		b = appendKey(b, "oldSubscriberCount", false)
		if e.OldSubs == nil {
			b = append(b, "null"...)
		} else {
			b = appendInt(b, *e.OldSubs)
		}
		b = appendInt(appendKey(b, "newSubscriberCount", false), e.NewSubs)
	case schemas.TypeChannelRenamed:
		str("oldChannelTitle", e.OldChan)
		str("newChannelTitle", e.NewChan)
	case schemas.TypeChannelAvatarChanged:
		str("oldAvatarUrl", e.OldAvatar)
		str("newAvatarUrl", e.NewAvatar)
	}
	return append(b, '}')
}
