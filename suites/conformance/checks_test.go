package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
)

const channelJSON = `{"id":"c1","platformChannelId":"UC1","title":"Chan","thumbnailUrl":null}`

func page(events ...string) judged {
	body := `{"nextCursor":null,"events":[` + strings.Join(events, ",") + `]}`
	return judged{&client.Response{Request: client.Get(schemas.PathFeed, nil, ""), Status: 200, Body: []byte(body)}, schemas.FeedPage}
}

func renamed(extra string) string {
	return `{"id":"e1","createdAt":1767225600000,"type":"channel_renamed","channel":` + channelJSON + `,"oldChannelTitle":"a","newChannelTitle":"b"` + extra + `}`
}

// Each violation blames one requirement: the spec of that requirement
// finds it, and the specs of the others do not.
func TestFilters(t *testing.T) {
	video := `{"platformVideoId":"v","currentTitle":"t","currentThumbnailUrl":"https://i.example/v.jpg","publishedAt":1767225600000,"isMembersOnly":false,"viewCount":1,"likeCount":null,"commentCount":0}`
	eventRules := []catalogue.ID{catalogue.EventSchema, catalogue.EventTypes, catalogue.EventChannelNoVideo, catalogue.CountNonnegOrNull,
		catalogue.URIFormat, catalogue.TimestampEpochMs, catalogue.FeedPageSchema}
	for _, tc := range []struct {
		name  string
		doc   judged
		id    catalogue.ID
		count int
	}{
		{"clean", page(renamed("")), catalogue.EventSchema, 0},
		{"video on a channel-level event", page(renamed(`,"video":` + video)), catalogue.EventChannelNoVideo, 1},
		{"null video on a channel-level event is absent", page(renamed(`,"video":null`)), catalogue.EventChannelNoVideo, 0},
		{"video event without video", page(`{"id":"e","createdAt":1,"type":"title_changed","channel":` + channelJSON + `,"oldTitle":"a","newTitle":"b"}`), catalogue.EventChannelNoVideo, 1},
		{"unknown type", page(`{"id":"e","createdAt":1,"type":"video_deleted","channel":` + channelJSON + `}`), catalogue.EventTypes, 1},
		{"negative count", page(`{"id":"e","createdAt":1,"type":"video_published","channel":` + channelJSON + `,"video":` + strings.Replace(video, `"viewCount":1`, `"viewCount":-1`, 1) + `}`), catalogue.CountNonnegOrNull, 1},
		{"count omitted instead of null", page(`{"id":"e","createdAt":1,"type":"video_published","channel":` + channelJSON + `,"video":` + strings.Replace(video, `"likeCount":null,`, ``, 1) + `}`), catalogue.CountNonnegOrNull, 1},
		{"bad URI", page(`{"id":"e","createdAt":1,"type":"channel_avatar_changed","channel":` + channelJSON + `,"oldAvatarUrl":"not a uri","newAvatarUrl":"https://a.example/x.png"}`), catalogue.URIFormat, 1},
		{"timestamp string", page(renamed(`,"createdAt":"2026-01-01T00:00:00Z"`)), catalogue.TimestampEpochMs, 1},
		{"a field of the wrong type", page(renamed(`,"newChannelTitle":7`)), catalogue.EventSchema, 1},
		{"no events array", judged{&client.Response{Request: client.Get(schemas.PathFeed, nil, ""), Status: 200, Body: []byte(`{"nextCursor":null}`)}, schemas.FeedPage}, catalogue.FeedPageSchema, 1},
		{"not JSON", judged{&client.Response{Request: client.Get(schemas.PathFeed, nil, ""), Status: 200, Body: []byte(`{"events":[`)}, schemas.FeedPage}, catalogue.FeedPageSchema, 1},
		{"not UTF-8", judged{&client.Response{Request: client.Get(schemas.PathFeed, nil, ""), Status: 200, Body: []byte("{\"events\":[],\"nextCursor\":\"\xff\"}")}, schemas.FeedPage}, catalogue.FeedPageSchema, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := schemaFindings([]judged{tc.doc}, owned(tc.id)); len(got) != tc.count {
				t.Errorf("findings of %s = %v, want %d", tc.id, got, tc.count)
			}
			for _, other := range eventRules {
				if got := schemaFindings([]judged{tc.doc}, owned(other)); other != tc.id && len(got) > 0 {
					t.Errorf("%s blamed too: %v", other, got)
				}
			}
		})
	}
}

func TestTimestampFindings(t *testing.T) {
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
		doc := page(`{"id":"e","createdAt":` + tc.createdAt + `}`)
		got := timestampFindings([]judged{doc}, now)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: %v", tc.createdAt, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0].line, tc.want) || !strings.Contains(got[0].line, "/events/0/createdAt")):
			t.Errorf("%s: %v, want one finding saying %q", tc.createdAt, got, tc.want)
		}
	}
}

func TestPartition(t *testing.T) {
	resp := func(body string) *client.Response {
		return &client.Response{Request: client.PostJSON(schemas.PathVideos, `{}`, ""), Status: 200, Body: []byte(body)}
	}
	entry := func(id string) string { return `{"video":{"platformVideoId":"` + id + `"}}` }
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"videos":[` + entry("a") + `],"missingVideoIds":["b"]}`, 0},
		{`{"videos":[],"missingVideoIds":["a"]}`, 1},                         // b unanswered
		{`{"videos":[` + entry("a") + `],"missingVideoIds":["a","b"]}`, 1},   // a twice
		{`{"videos":[` + entry("a") + `],"missingVideoIds":["b","zzz"]}`, 1}, // zzz not requested
		{`{"videos":[{"video":{}}],"missingVideoIds":["a","b"]}`, 1},         // entry without id
	} {
		if got := partition(resp(tc.body), []string{"a", "b"}); len(got) != tc.want {
			t.Errorf("%s: %v, want %d problem(s)", tc.body, got, tc.want)
		}
	}
}

func TestInventedIDs(t *testing.T) {
	for _, n := range []int{24, schemas.MaxVideoIDLen, schemas.MaxVideoIDLen + 1} {
		id := inventedID(7, n)
		if len(id) != n || !strings.Contains(id, "~") {
			t.Errorf("inventedID(7, %d) = %q", n, id)
		}
	}
	if inventedID(1, 24) == inventedID(2, 24) {
		t.Error("invented ids collide")
	}
}

func TestDetailsMention(t *testing.T) {
	r := func(body string) *client.Response { return &client.Response{Body: []byte(body)} }
	for body, want := range map[string]bool{
		`{"error":"e","message":"m","details":{"limit":"must be >= 1"}}`: true,
		`{"error":"e","message":"m","details":[{"param":"limit"}]}`:      true,
		`{"error":"e","message":"m","details":"limit is invalid"}`:       true,
		`{"error":"e","message":"limit"}`:                                false,
		`{"error":"e","message":"m","details":{"cursor":"x"}}`:           false,
	} {
		if got := detailsMention(r(body), "limit"); got != want {
			t.Errorf("%s: %v, want %v", body, got, want)
		}
	}
}
