package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
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

func TestFilters(t *testing.T) {
	video := `{"platformVideoId":"v","currentTitle":"t","currentThumbnailUrl":"https://i.example/v.jpg","publishedAt":1767225600000,"isMembersOnly":false,"viewCount":1,"likeCount":null,"commentCount":0}`
	for _, tc := range []struct {
		name  string
		doc   judged
		keep  func(schemas.Violation) bool
		count int
	}{
		{"clean", page(renamed("")), inEvent, 0},
		{"video on a channel-level event", page(renamed(`,"video":` + video)), isVideoPresenceRule, 1},
		{"null video on a channel-level event is absent", page(renamed(`,"video":null`)), isVideoPresenceRule, 0},
		{"video event without video", page(`{"id":"e","createdAt":1,"type":"title_changed","channel":` + channelJSON + `,"oldTitle":"a","newTitle":"b"}`), isVideoPresenceRule, 1},
		{"unknown type", page(`{"id":"e","createdAt":1,"type":"video_deleted","channel":` + channelJSON + `}`), isTypeRule, 1},
		{"negative count", page(`{"id":"e","createdAt":1,"type":"video_published","channel":` + channelJSON + `,"video":` + strings.Replace(video, `"viewCount":1`, `"viewCount":-1`, 1) + `}`), isCountRule, 1},
		{"count omitted instead of null", page(`{"id":"e","createdAt":1,"type":"video_published","channel":` + channelJSON + `,"video":` + strings.Replace(video, `"likeCount":null,`, ``, 1) + `}`), isCountRule, 1},
		{"bad URI", page(`{"id":"e","createdAt":1,"type":"channel_avatar_changed","channel":` + channelJSON + `,"oldAvatarUrl":"not a uri","newAvatarUrl":"https://a.example/x.png"}`), isURIRule, 1},
		{"timestamp string", page(renamed(`,"createdAt":"2026-01-01T00:00:00Z"`)), func(v schemas.Violation) bool { return about(v, timestampFields...) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := schemaFindings([]judged{tc.doc}, tc.keep); len(got) != tc.count {
				t.Errorf("findings = %v, want %d", got, tc.count)
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
