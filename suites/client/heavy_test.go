package client_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
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

// heavyVideos is a tracked-videos answer of 20 VideoEntries, each with
// eventsPer events of every type (channel-level ones too) and samples
// hourly stat samples.
func heavyVideos(eventsPer, samples int) []byte {
	entries := make([]string, schemas.MaxVideoIDs)
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

// The heavy world validates: the benchmark below measures a valid one.
func TestHeavyWorldValidates(t *testing.T) {
	for name, c := range map[string]struct {
		res  schemas.Resource
		body []byte
	}{"feed": {schemas.FeedPage, heavyFeedPage()}, "videos": {schemas.VideosResponse, heavyVideos(12, 720)}} {
		if err := (&client.Response{Body: c.body}).Validate(c.res); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
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
		{"videos20x12ev48samples", schemas.VideosResponse, heavyVideos(12, 48), 20 * 12},
		{"videos20x12ev240samples", schemas.VideosResponse, heavyVideos(12, 240), 20 * 12},
		{"videos20x12ev720samples", schemas.VideosResponse, heavyVideos(12, 720), 20 * 12},
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
