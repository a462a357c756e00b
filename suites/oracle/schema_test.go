package oracle

import (
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

const channelJSON = `{"id":"c1","platformChannelId":"UC1","title":"Chan","thumbnailUrl":null}`

// judged is an answer and the resource it must be.
type judged struct {
	resp *client.Response
	res  schemas.Resource
}

func feedPage(events ...string) judged {
	body := `{"nextCursor":null,"events":[` + strings.Join(events, ",") + `]}`
	return judged{&client.Response{Request: client.Get(schemas.PathFeed, nil, ""), Status: 200, Body: []byte(body)}, schemas.FeedPage}
}

// blames counts the violations of an answer that blame id.
func blames(j judged, id catalogue.ID) int {
	n := 0
	for _, v := range Violations(j.resp, j.res) {
		if ViolationRequirement(j.res, v) == id {
			n++
		}
	}
	return n
}

func renamed(extra string) string {
	return `{"id":"e1","createdAt":1767225600000,"type":"channel_renamed","channel":` + channelJSON + `,"oldChannelTitle":"a","newChannelTitle":"b"` + extra + `}`
}

// Each violation blames one requirement: the spec of that requirement
// finds it, and the specs of the others do not.
func TestViolationBlamesOneRequirement(t *testing.T) {
	video := `{"platformVideoId":"v","currentTitle":"t","currentThumbnailUrl":"https://i.example/v.jpg","publishedAt":1767225600000,"isMembersOnly":false,"viewCount":1,"likeCount":null,"commentCount":0}`
	eventRules := []catalogue.ID{catalogue.EventSchema, catalogue.EventTypes, catalogue.EventChannelNoVideo, catalogue.CountNonnegOrNull,
		catalogue.URIFormat, catalogue.TimestampEpochMs, catalogue.FeedPageSchema}
	for _, tc := range []struct {
		name  string
		doc   judged
		id    catalogue.ID
		count int
	}{
		{"clean", feedPage(renamed("")), catalogue.EventSchema, 0},
		{"video on a channel-level event", feedPage(renamed(`,"video":` + video)), catalogue.EventChannelNoVideo, 1},
		{"null video on a channel-level event is absent", feedPage(renamed(`,"video":null`)), catalogue.EventChannelNoVideo, 0},
		{"video event without video", feedPage(`{"id":"e","createdAt":1,"type":"title_changed","channel":` + channelJSON + `,"oldTitle":"a","newTitle":"b"}`), catalogue.EventChannelNoVideo, 1},
		{"unknown type", feedPage(`{"id":"e","createdAt":1,"type":"video_deleted","channel":` + channelJSON + `}`), catalogue.EventTypes, 1},
		{"negative count", feedPage(`{"id":"e","createdAt":1,"type":"video_published","channel":` + channelJSON + `,"video":` + strings.Replace(video, `"viewCount":1`, `"viewCount":-1`, 1) + `}`), catalogue.CountNonnegOrNull, 1},
		{"count omitted instead of null", feedPage(`{"id":"e","createdAt":1,"type":"video_published","channel":` + channelJSON + `,"video":` + strings.Replace(video, `"likeCount":null,`, ``, 1) + `}`), catalogue.CountNonnegOrNull, 1},
		{"bad URI", feedPage(`{"id":"e","createdAt":1,"type":"channel_avatar_changed","channel":` + channelJSON + `,"oldAvatarUrl":"not a uri","newAvatarUrl":"https://a.example/x.png"}`), catalogue.URIFormat, 1},
		{"timestamp string", feedPage(renamed(`,"createdAt":"2026-01-01T00:00:00Z"`)), catalogue.TimestampEpochMs, 1},
		{"a field of the wrong type", feedPage(renamed(`,"newChannelTitle":7`)), catalogue.EventSchema, 1},
		{"no events array", judged{&client.Response{Request: client.Get(schemas.PathFeed, nil, ""), Status: 200, Body: []byte(`{"nextCursor":null}`)}, schemas.FeedPage}, catalogue.FeedPageSchema, 1},
		{"not JSON", judged{&client.Response{Request: client.Get(schemas.PathFeed, nil, ""), Status: 200, Body: []byte(`{"events":[`)}, schemas.FeedPage}, catalogue.FeedPageSchema, 1},
		{"not UTF-8", judged{&client.Response{Request: client.Get(schemas.PathFeed, nil, ""), Status: 200, Body: []byte("{\"events\":[],\"nextCursor\":\"\xff\"}")}, schemas.FeedPage}, catalogue.FeedPageSchema, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := blames(tc.doc, tc.id); got != tc.count {
				t.Errorf("violations of %s = %d, want %d", tc.id, got, tc.count)
			}
			for _, other := range eventRules {
				if got := blames(tc.doc, other); other != tc.id && got > 0 {
					t.Errorf("%s blamed too: %d", other, got)
				}
			}
		})
	}
}

func TestImplausibleTimestamps(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		createdAt string
		want      string // "" for no finding
	}{
		{"1767225600000", ""},
		{"1767225600", "looks like seconds"},
		{"1767225600000000", "microseconds"},
		{`"2026-01-01T00:00:00Z"`, "ISO 8601"},
		{"1767225600000.5", "not an integer"},
		{"12", "not before 2000-01-01"},
	} {
		doc, err := jsondoc.Decode([]byte(tc.createdAt))
		if err != nil {
			t.Fatal(err)
		}
		got := Implausible(doc, now.AddDate(1, 0, 0))
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want one saying %q", tc.createdAt, got, tc.want)
		}
	}
}
