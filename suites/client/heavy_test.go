package client_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// heavyTitle is a title of a heavy world: 300+ characters of combining
// marks, emoji sequences, right-to-left text and zero-width characters,
// different for each n.
func heavyTitle(n int) string {
	return strings.Repeat("e\u0301 👨\u200d👩\u200d👧 שלום مرحبا zero\u200bwidth \u202eRTL\u202c ", 12) + strconv.Itoa(n)
}

// heavyEvent is an event of each of the 11 types in turn, with heavy
// titles and members the contract does not list.
func heavyEvent(n int, channel string) string {
	title := strconv.Quote(heavyTitle(n))
	ref := `{"platformVideoId":"v` + strconv.Itoa(n%40) + `","currentTitle":` + title + `,"currentThumbnailUrl":"https://i.example.com/vi/v/0.jpg","publishedAt":1767225600000}`
	var fields string
	switch typ := schemas.EventTypes[n%len(schemas.EventTypes)]; typ {
	case "video_published":
		fields = `"video":{"platformVideoId":"v1","currentTitle":` + title + `,"currentThumbnailUrl":"https://i.example.com/vi/v/0.jpg","publishedAt":1767225600000,"isMembersOnly":false,"viewCount":12,"likeCount":null,"commentCount":0}`
	case "title_changed":
		fields = `"video":` + ref + `,"oldTitle":` + strconv.Quote(heavyTitle(n+1)) + `,"newTitle":` + title
	case "thumbnail_changed":
		fields = `"video":` + ref + `,"oldThumbnailUrl":"https://i.example.com/a.jpg","newThumbnailUrl":"https://i.example.com/b.jpg"`
	case "title_ab_test":
		fields = `"video":` + ref + `,"titles":[` + title + `,` + strconv.Quote(heavyTitle(n+2)) + `,` + strconv.Quote(heavyTitle(n+3)) + `]`
	case "title_ab_test_concluded":
		fields = `"video":` + ref + `,"titles":[` + title + `,` + strconv.Quote(heavyTitle(n+2)) + `],"finalTitle":` + title
	case "thumbnail_ab_test":
		fields = `"video":` + ref + `,"thumbnailUrls":["https://i.example.com/a.jpg","https://i.example.com/b.jpg"]`
	case "thumbnail_ab_test_concluded":
		fields = `"video":` + ref + `,"thumbnailUrls":["https://i.example.com/a.jpg","https://i.example.com/b.jpg"],"finalThumbnailUrl":"https://i.example.com/b.jpg"`
	case "members_only_changed":
		fields = `"video":` + ref + `,"isMembersOnly":true`
	case "subscriber_change":
		fields = `"oldSubscriberCount":null,"newSubscriberCount":100000`
	case "channel_renamed":
		fields = `"oldChannelTitle":` + strconv.Quote(heavyTitle(n+4)) + `,"newChannelTitle":` + title
	default:
		fields = `"oldAvatarUrl":"https://yt3.example.com/a=s176","newAvatarUrl":"https://yt3.example.com/b=s176"`
	}
	typ := schemas.EventTypes[n%len(schemas.EventTypes)]
	return fmt.Sprintf(`{"id":"evt_%d","createdAt":%d,"type":%q,"channel":%s,%s,"object":"event","schemaVersion":3,"source":{"poller":"rolling","region":null}}`,
		n, 1767225600000-int64(n)*60_000, typ, channel, fields)
}

const heavyChannel = `{"id":"ch_1","platformChannelId":"UC1","title":"\u202eלערוץ\u202c 🎉 e\u0301","thumbnailUrl":null}`

// heavyFeedPage is a page of 200 heavy events.
func heavyFeedPage() []byte {
	events := make([]string, schemas.MaxPageSize)
	for i := range events {
		events[i] = heavyEvent(i, heavyChannel)
	}
	return []byte(`{"events":[` + strings.Join(events, ",") + `],"nextCursor":"c","object":"feed_page"}`)
}

// heavyVideos is a tracked-videos answer of n VideoEntries, each with
// eventsPer events of every type (channel-level ones too) and samples
// hourly stat samples.
func heavyVideos(n, eventsPer, samples int) []byte {
	entries := make([]string, n)
	for e := range entries {
		events := make([]string, eventsPer)
		for i := range events {
			events[i] = heavyEvent(e*eventsPer+i, heavyChannel)
		}
		ss := make([]string, samples)
		for i := range ss {
			ss[i] = fmt.Sprintf(`{"viewCount":%d,"likeCount":null,"commentCount":%d,"createdAt":%d}`, 1000+i, i/10, 1767225600000-int64(i)*3_600_000)
		}
		entries[e] = fmt.Sprintf(`{"video":{"platformVideoId":"v%d","currentTitle":%q,"currentThumbnailUrl":"https://i.example.com/vi/v/0.jpg","publishedAt":1767225600000,"isMembersOnly":false,"viewCount":1,"likeCount":null,"commentCount":0,"channel":%s},"firstSeenAt":1767225600000,"historyWindowDays":30,"isGraphLocked":false,"events":[%s],"statSamples":[%s],"sampleCount":%d}`,
			e, heavyTitle(e), heavyChannel, strings.Join(events, ","), strings.Join(ss, ","), samples)
	}
	return []byte(`{"videos":[` + strings.Join(entries, ",") + `],"missingVideoIds":[],"object":"video_list"}`)
}

// BenchmarkValidateHeavyWorld validates the answers of a heavy world: a
// feed page of 200 events and tracked-videos answers of 20 VideoEntries
// whose events include channel-level ones, with 300-character Unicode
// titles and extra members, and 48 to 720 hourly stat samples (two days
// to a month). events/s and events/cpu-s count the events of the
// answers; cpu-ns/op is the process's CPU time (the machine may be shared).
func BenchmarkValidateHeavyWorld(b *testing.B) {
	for _, c := range []struct {
		name   string
		res    schemas.Resource
		body   []byte
		events int
	}{
		{"feed200", schemas.FeedPage, heavyFeedPage(), schemas.MaxPageSize},
		{"videos20x12ev48samples", schemas.VideosResponse, heavyVideos(20, 12, 48), 20 * 12},
		{"videos20x12ev240samples", schemas.VideosResponse, heavyVideos(20, 12, 240), 20 * 12},
		{"videos20x12ev720samples", schemas.VideosResponse, heavyVideos(20, 12, 720), 20 * 12},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				// decoded and validated, as the suite does once per answer
				if err := (&client.Response{Body: c.body}).Validate(c.res); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.events*b.N)/b.Elapsed().Seconds(), "events/s")
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(c.events*b.N)/cpu.Seconds(), "events/cpu-s")
			}
		})
	}
}

// Validating an answer hands each of its values to the validator about
// once, whatever its shape, in pieces of at most about validateChunk
// values: the work grows linearly with the answer, and the memory of one
// validation is bounded. (It once validated everything outside the largest
// array again for each of its pieces: exponential in the number of large
// arrays.)
func TestValidationWorkIsLinear(t *testing.T) {
	for _, c := range []struct {
		name string
		res  schemas.Resource
		body []byte
	}{
		{"feed page", schemas.FeedPage, heavyFeedPage()},
		{"20 entries, 48 samples", schemas.VideosResponse, heavyVideos(20, 12, 48)},
		{"20 entries, 240 samples", schemas.VideosResponse, heavyVideos(20, 12, 240)},

		{"20 entries of 60 events", schemas.VideosResponse, heavyVideos(20, 60, 24)},
		{"one entry of 6,000 samples", schemas.VideosResponse, heavyVideos(1, 12, 6000)},
		{"a page of 3,000 events", schemas.FeedPage, []byte(`{"events":[` + strings.Repeat(`{"id":"e","createdAt":1,"type":"title_ab_test","channel":`+heavyChannel+`,"video":{"platformVideoId":"v","currentTitle":"t","currentThumbnailUrl":"https://i.example.com/v.jpg","publishedAt":1},"titles":["a","b"]},`, 3000) + `1],"nextCursor":null}`)},
		{"arrays in arrays", schemas.FeedPage, []byte(`{"events":[` + strings.Repeat(`[`+strings.Repeat(`[1,2,3,4],`, 600)+`1],`, 15) + `1],"nextCursor":null}`)},
	} {
		doc, err := jsondoc.Decode(c.body)
		if err != nil {
			t.Fatal(err)
		}
		values := client.CountValues(doc)
		work, largest := client.ValidationWork(c.res, doc)
		// the skeleton and the pieces' contexts repeat a few values
		if work < values || work > values+values/10+1000 {
			t.Errorf("%s: %d values, %d handed to the validator", c.name, values, work)
		}
		// and each piece is small (a few more values: its context)
		if largest > client.ValidateChunk+100 {
			t.Errorf("%s: %d values validated at once", c.name, largest)
		}
	}
}

// An answer of a heavy world that breaks rules deep in its pieces (items
// of an A/B test's titles, which only the event's type makes a rule of,
// one of them in a piece of its own; a stat sample; a channel-level event
// with a video) has the same
// violations, at the same pointers, with the same values and event types,
// as validating it whole finds.
func TestHeavyAnswerValidatesInPiecesAlike(t *testing.T) {
	doc, err := jsondoc.Decode(heavyVideos(20, 24, 240))
	if err != nil {
		t.Fatal(err)
	}
	// the first event of a type in an entry
	event := func(entry int, typ string) string {
		for i, e := range jsondoc.Items(doc, fmt.Sprintf("/videos/%d/events", entry)) {
			if got, _ := jsondoc.String(e, "/type"); got == typ {
				return fmt.Sprintf("/videos/%d/events/%d", entry, i)
			}
		}
		t.Fatalf("no %s in entry %d", typ, entry)
		return ""
	}
	// an A/B test of 300 titles, split off in pieces of its own
	abTest, _ := jsondoc.Decode([]byte(heavyEvent(3, heavyChannel)))
	titles := make([]any, 300)
	for i := range titles {
		titles[i] = heavyTitle(i)
	}
	titles[150] = json.Number("7")
	abTest.(map[string]any)["titles"] = titles
	for ptr, v := range map[string]any{
		"/videos/0/events/0":                                  abTest,
		event(7, "title_ab_test") + "/titles/1":               json.Number("5"),
		event(19, "channel_avatar_changed") + "/newAvatarUrl": "not a uri",
		event(4, "subscriber_change") + "/video":              map[string]any{},
		"/videos/13/statSamples/200/viewCount":                json.Number("-1"),
		"/videos/0/statSamples/5/createdAt":                   "x",
		"/videos/11/firstSeenAt":                              "yesterday",
		"/missingVideoIds":                                    []any{json.Number("1")},
	} {
		if doc, err = jsondoc.Set(doc, ptr, v); err != nil {
			t.Fatal(ptr, err)
		}
	}
	if !jsondoc.Delete(doc, event(2, "title_changed")+"/newTitle") {
		t.Fatal("nothing deleted")
	}
	body := jsondoc.Encode(doc)
	if client.CountValues(doc) <= 20_000 {
		t.Fatal("the answer is small enough to validate whole: it tests nothing")
	}
	want := schemas.ValidateJSON(schemas.VideosResponse, body)
	got := (&client.Response{Body: body}).Validate(schemas.VideosResponse)
	wv, gv := want.(*schemas.Error).Violations, got.(*schemas.Error).Violations
	if len(wv) < 8 {
		t.Fatalf("whole: only %d violations: %v", len(wv), wv)
	}
	if !reflect.DeepEqual(wv, gv) {
		t.Errorf("in pieces:\n%v\nwhole:\n%v", gv, wv)
	}
}

// A large answer is validated in pieces (bounded.go), which is validating
// it whole only while no schema of an answer judges an array item by its
// siblings or by anything but its ancestors' scalars: none of these
// keywords may appear in one. (videos-request.json is a request's.)
func TestSchemasJudgeItemsAlone(t *testing.T) {
	forbidden := []string{"minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "prefixItems",
		"unevaluatedItems", "unevaluatedProperties", "dependentSchemas", "dependentRequired"}
	names, err := fs.Glob(schemas.FS(), "*.json")
	if err != nil || len(names) < len(schemas.Resources) {
		t.Fatalf("schema files %v: %v", names, err)
	}
	for _, name := range names {
		raw, err := fs.ReadFile(schemas.FS(), name)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsondoc.Decode(raw)
		if err != nil {
			t.Fatal(name, err)
		}
		jsondoc.Walk(doc, func(ptr string, _ any) {
			if slices.Contains(forbidden, jsondoc.Last(ptr)) && name != string(schemas.VideosRequest) {
				t.Errorf("%s#%s: an answer's schema judges array items together; suites/client validates large answers in pieces that do not", name, ptr)
			}
		})
	}
}
