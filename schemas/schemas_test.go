package schemas_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
)

const channel = `{"id":"c1","platformChannelId":"UC1","title":"Chan","thumbnailUrl":null}`
const videoRef = `{"platformVideoId":"v1","currentTitle":"T","currentThumbnailUrl":"https://i.example/v1.jpg","publishedAt":1700000000000}`

func mustErr(t *testing.T, r schemas.Resource, doc string) *schemas.Error {
	t.Helper()
	err := schemas.ValidateJSON(r, []byte(doc))
	var se *schemas.Error
	if !errors.As(err, &se) {
		t.Fatalf("%s: want a *schemas.Error for %s, got %v", r, doc, err)
	}
	return se
}

func TestValidDocuments(t *testing.T) {
	for _, tc := range []struct {
		r   schemas.Resource
		doc string
	}{
		{schemas.HealthBody, `{"status":"ok"}`},
		{schemas.ErrorBody, `{"error":"bad_request","message":"m","details":{"limit":"x"}}`},
		{schemas.Event, `{"id":"e","createdAt":1,"type":"title_changed","channel":` + channel + `,"video":` + videoRef + `,"oldTitle":"a","newTitle":"b"}`},
		{schemas.Event, `{"id":"e","createdAt":1,"type":"subscriber_change","channel":` + channel + `,"oldSubscriberCount":null,"newSubscriberCount":1000,"extra":true}`},
		{schemas.FeedPage, `{"events":[],"nextCursor":null}`},
		{schemas.VideosRequest, `{"videoIds":["` + strings.Repeat("x", schemas.MaxVideoIDLen) + `"]}`},
		{schemas.StatSample, `{"viewCount":9007199254740991,"likeCount":null,"commentCount":0,"createdAt":1}`},
	} {
		if err := schemas.ValidateJSON(tc.r, []byte(tc.doc)); err != nil {
			t.Errorf("%s: %s: %v", tc.r, tc.doc, err)
		}
	}
}

func TestViolationNamesTypeFieldAndValue(t *testing.T) {
	page := `{"nextCursor":null,"events":[{"id":"e","createdAt":1,"type":"title_changed","channel":` + channel + `,"video":` + videoRef + `,"newTitle":"b"}]}`
	se := mustErr(t, schemas.FeedPage, page)
	i := slices.IndexFunc(se.Violations, func(v schemas.Violation) bool { return v.Keyword == "required" })
	if i < 0 {
		t.Fatalf("no required violation in %v", se)
	}
	v := se.Violations[i]
	if v.Pointer != "/events/0" || v.EventType != "title_changed" || !strings.Contains(v.Rule, "oldTitle") {
		t.Errorf("violation = %+v, want /events/0 required oldTitle by title_changed", v)
	}
	if !strings.Contains(se.Error(), "required by title_changed") {
		t.Errorf("message does not name the type: %s", se)
	}
}

func TestRulesTheSpecStates(t *testing.T) {
	for _, tc := range []struct {
		name, doc, pointer, keyword string
		r                           schemas.Resource
	}{
		{"unknown event type", `{"id":"e","createdAt":1,"type":"video_deleted","channel":` + channel + `}`, "/type", "enum", schemas.Event},
		{"video on channel-level event", `{"id":"e","createdAt":1,"type":"channel_renamed","channel":` + channel + `,"oldChannelTitle":"a","newChannelTitle":"b","video":` + videoRef + `}`, "/video", "type", schemas.Event},
		{"timestamp as ISO string", `{"viewCount":1,"likeCount":1,"commentCount":1,"createdAt":"2024-01-01T00:00:00Z"}`, "/createdAt", "type", schemas.StatSample},
		{"negative count", `{"viewCount":-1,"likeCount":1,"commentCount":1,"createdAt":1}`, "/viewCount", "minimum", schemas.StatSample},
		{"count omitted", `{"likeCount":1,"commentCount":1,"createdAt":1}`, "", "required", schemas.StatSample},
		{"not a URI", `{"id":"c","platformChannelId":"p","title":"t","thumbnailUrl":"not a uri"}`, "/thumbnailUrl", "format", schemas.ChannelRef},
		{"no ids", `{"videoIds":[]}`, "/videoIds", "minItems", schemas.VideosRequest},
		{"21 ids", `{"videoIds":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21"]}`, "/videoIds", "maxItems", schemas.VideosRequest},
		{"33-character id", `{"videoIds":["` + strings.Repeat("x", 33) + `"]}`, "/videoIds/0", "maxLength", schemas.VideosRequest},
		{"empty id", `{"videoIds":[""]}`, "/videoIds/0", "minLength", schemas.VideosRequest},
		{"health not ok", `{"status":"up"}`, "/status", "const", schemas.HealthBody},
		{"historyWindowDays zero", `{"video":{},"firstSeenAt":1,"historyWindowDays":0,"isGraphLocked":false,"events":[],"statSamples":[]}`, "/historyWindowDays", "exclusiveMinimum", schemas.VideoEntry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			se := mustErr(t, tc.r, tc.doc)
			if !se.HasViolation(tc.pointer, tc.keyword) {
				t.Errorf("want %q at %q, got %s", tc.keyword, tc.pointer, se)
			}
		})
	}
}

func TestNotJSON(t *testing.T) {
	se := mustErr(t, schemas.VideosRequest, `{"videoIds":`)
	if !se.HasViolation("", "json") {
		t.Errorf("got %s", se)
	}
}

// The numbers in contract.go must be the numbers in the schema files.
func TestConstantsMatchSchemaFiles(t *testing.T) {
	var req struct {
		Properties struct {
			VideoIDs struct {
				MinItems, MaxItems int
				Items              struct{ MinLength, MaxLength int }
			} `json:"videoIds"`
		}
	}
	raw, _ := fs.ReadFile(schemas.FS(), string(schemas.VideosRequest))
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	ids := req.Properties.VideoIDs
	if ids.MinItems != schemas.MinVideoIDs || ids.MaxItems != schemas.MaxVideoIDs ||
		ids.Items.MinLength != schemas.MinVideoIDLen || ids.Items.MaxLength != schemas.MaxVideoIDLen {
		t.Errorf("videos-request.json says %+v, contract.go says %d..%d ids of %d..%d", ids,
			schemas.MinVideoIDs, schemas.MaxVideoIDs, schemas.MinVideoIDLen, schemas.MaxVideoIDLen)
	}
	var ev struct {
		Properties struct{ Type struct{ Enum []string } }
		Defs       map[string]json.RawMessage `json:"$defs"`
	}
	raw, _ = fs.ReadFile(schemas.FS(), string(schemas.Event))
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ev.Properties.Type.Enum, schemas.EventTypes) {
		t.Errorf("event.json types %v, contract.go %v", ev.Properties.Type.Enum, schemas.EventTypes)
	}
	for _, typ := range schemas.EventTypes {
		if _, ok := ev.Defs[typ]; !ok {
			t.Errorf("event.json has no definition for %s", typ)
		}
	}
}

func TestEveryResourceCompiles(t *testing.T) {
	for _, r := range schemas.Resources {
		err := schemas.Validate(r, map[string]any{})
		var se *schemas.Error
		if err != nil && !errors.As(err, &se) {
			t.Errorf("%s: %v", r, err)
		}
	}
}

func TestVideoPublishedHasNoChannelInside(t *testing.T) {
	stats := `{"platformVideoId":"v","currentTitle":"t","currentThumbnailUrl":"https://i.example/v.jpg","publishedAt":1,"isMembersOnly":false,"viewCount":1,"likeCount":null,"commentCount":0`
	ok := `{"id":"e","createdAt":1,"type":"video_published","channel":` + channel + `,"video":` + stats + `}}`
	if err := schemas.ValidateJSON(schemas.Event, []byte(ok)); err != nil {
		t.Fatal(err)
	}
	se := mustErr(t, schemas.Event, `{"id":"e","createdAt":1,"type":"video_published","channel":`+channel+`,"video":`+stats+`,"channel":`+channel+`}}`)
	if !se.HasViolation("/video/channel", "not") || se.Violations[0].EventType != "video_published" {
		t.Errorf("got %s", se)
	}
}

func TestEventTypeSurvivesRef(t *testing.T) {
	se := mustErr(t, schemas.Event, `{"id":"e","createdAt":1,"type":"subscriber_change","channel":`+channel+`,"oldSubscriberCount":-1,"newSubscriberCount":5}`)
	if !se.HasViolation("/oldSubscriberCount", "minimum") || se.Violations[0].EventType != "subscriber_change" {
		t.Errorf("got %s", se)
	}
}
