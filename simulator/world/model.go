package world

import (
	"math"
	"strconv"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/fixtures"
)

// MaxCount is the largest counter the world produces: 2^53-1, the largest
// integer every JSON reader holds exactly.
const MaxCount = 1<<53 - 1

// channel is a channel's whole state. Exported fields are its export.
type channel struct {
	ID         string `json:"id"`
	PlatformID string `json:"platformChannelId"`
	Title      string `json:"title"`
	// Avatar is the thumbnailUrl; "" stands for null.
	Avatar string `json:"avatar"`
	// Subs is the true subscriber count; SeenSubs the one observed at the
	// last poll, -1 when it was hidden or there was no poll yet.
	Subs      int64 `json:"subscribers"`
	SeenSubs  int64 `json:"seenSubscribers"`
	Milestone int64 `json:"milestone"`
	// Growth is subscriber growth per day, as a fraction; Uploads is the
	// mean number of uploads per day.
	Growth   float64 `json:"growthPerDay"`
	Uploads  float64 `json:"uploadsPerDay"`
	Offset   uint32  `json:"offsetMs"`
	NextTick int64   `json:"nextTick"`
	LastPoll int64   `json:"lastPoll"`
	Polls    uint32  `json:"polls"`
	// Unknown names what a recorded world could not see (record.go).
	Unknown []string `json:"unknown,omitempty"`

	ref []byte // the ChannelRef, encoded; rebuilt when the channel changes
	ver uint64 // counts changes of ref, for cached entries
}

func (c *channel) encodeRef() {
	b := make([]byte, 0, 64+len(c.ID)+len(c.PlatformID)+len(c.Title)+len(c.Avatar))
	b = appendKey(append(b, '{'), "id", true)
	b = appendString(b, c.ID)
	b = appendKey(b, "platformChannelId", false)
	b = appendString(b, c.PlatformID)
	b = appendKey(b, "title", false)
	b = appendString(b, c.Title)
	b = appendKey(b, "thumbnailUrl", false)
	if c.Avatar == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, c.Avatar)
	}
	c.ref = append(b, '}')
	c.ver++
}

// Which counters a poll could not see.
const (
	hideViews uint8 = 1 << iota
	hideLikes
	hideComments
)

// abTest is a running A/B test of titles or thumbnails.
type abTest struct {
	Variants []string `json:"variants"`
	Left     int      `json:"pollsLeft"`
}

// video is a video's whole state. Exported fields are its export. The
// fields every poll touches come first, so a poll reads few cache lines.
type video struct {
	Polls       uint32 `json:"polls"`
	Offset      uint32 `json:"offsetMs"`
	NextTick    int64  `json:"nextTick"`
	PublishedAt int64  `json:"publishedAt"`
	LastPoll    int64  `json:"lastPoll"`
	// The growth model: Reach views over a lifetime, most within Tau hours;
	// Expect is the model's view count at LastPoll.
	Reach       float64 `json:"reach"`
	Expect      float64 `json:"expect"`
	Tau         float64 `json:"tauHours"`
	LikeRate    float64 `json:"likeRate"`
	CommentRate float64 `json:"commentRate"`
	// The true counters; Hidden says which the last poll could not see.
	Views    int64 `json:"views"`
	Likes    int64 `json:"likes"`
	Comments int64 `json:"comments"`
	Hidden   uint8 `json:"hidden"`
	// SHour is the clock hour of the last kept sample.
	SHour     int64   `json:"sampleHour"`
	TitleTest *abTest `json:"titleTest,omitempty"`
	ThumbTest *abTest `json:"thumbnailTest,omitempty"`

	ID          string `json:"platformVideoId"`
	Channel     int32  `json:"channel"`
	MembersOnly bool   `json:"membersOnly"`
	FirstSeenAt int64  `json:"firstSeenAt"`
	Title       string `json:"title"`
	Thumb       string `json:"thumbnailUrl"`

	// Samples is the compact stat history (see samples.go); S* are the
	// values of its last record, which the next record is a delta from.
	Samples []byte `json:"samples"`
	ST      int64  `json:"sampleTime"`
	SV      int64  `json:"sampleViews"`
	SL      int64  `json:"sampleLikes"`
	SC      int64  `json:"sampleComments"`
	// Unknown names what a recorded world could not see (record.go).
	Unknown []string `json:"unknown,omitempty"`

	events []uint32 // positions of its events, oldest first
	// ver counts changes (polls, events), so that a cached VideoEntry
	// knows when it is stale.
	ver   uint64
	cache atomic.Pointer[entryCache]
}

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func randomID(r *rng, n int) string {
	var b [64]byte
	for i := range n {
		b[i] = idAlphabet[r.intn(len(idAlphabet))]
	}
	return string(b[:n])
}

func randomHex(r *rng, n int) string {
	var b [32]byte
	for i := range n {
		b[i] = hexDigits[r.intn(16)]
	}
	return string(b[:n])
}

// Platform video ids are 11 characters; at the edge rate 12 to 32.
const (
	platformVideoIDLen = 11
	platformChannelLen = 22
)

func (w *World) newVideoID(r *rng, edge float64) string {
	for {
		n := platformVideoIDLen
		if r.float() < edge {
			n = 12 + r.intn(32-12+1)
		}
		id := randomID(r, n)
		if _, dup := w.videoByID[id]; !dup {
			return id
		}
	}
}

func thumbURL(r *rng, videoID string, edge float64) string {
	u := "https://i.example.com/vi/" + videoID + "/" + randomHex(r, 8) + ".jpg"
	if r.float() < edge {
		u += "?sqp=-oaymwE%3D&rs=AOn4CL" + randomHex(r, 6) + "&v=" + strconv.Itoa(2+r.intn(8))
	}
	return u
}

func avatarURL(r *rng, platformChannelID string) string {
	return "https://yt3.example.com/" + platformChannelID + "/" + randomHex(r, 12) + "=s176-c-k"
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func videoTitle(r *rng, edge float64) string {
	f := r.faker()
	n := strconv.Itoa(2 + r.intn(48))
	var t string
	switch r.intn(10) {
	case 0:
		t = "How to " + f.Verb() + " a " + f.Noun() + " in " + n + " minutes"
	case 1:
		t = "I tried " + f.Hobby() + " for " + n + " days"
	case 2:
		t = capitalize(f.Adjective()) + " " + f.Noun() + " review"
	case 3:
		t = f.MovieName() + " but every " + f.Noun() + " is " + f.Adjective()
	case 4:
		t = "Top " + n + " " + f.Noun() + " moments of " + strconv.Itoa(2000+r.intn(26))
	case 5:
		t = f.BookTitle() + " (full story)"
	case 6:
		t = "Why " + f.ProgrammingLanguage() + " is " + f.Adjective() + " - " + f.HackerNoun() + " explained"
	case 7:
		t = f.SongName() + " - " + f.FirstName() + " " + f.LastName() + " (cover)"
	case 8:
		t = "Cooking " + f.Dinner() + " with " + f.Fruit() + " | Episode " + n
	default:
		t = capitalize(f.HackerVerb()) + " the " + f.HackerAdjective() + " " + f.HackerNoun() + "?!"
	}
	if r.float() < edge {
		t = edgeText(r, t)
	}
	return t
}

func channelTitle(r *rng, edge float64) string {
	f := r.faker()
	var t string
	switch r.intn(5) {
	case 0:
		t = f.Company()
	case 1:
		t = f.Gamertag()
	case 2:
		t = f.FirstName() + " " + f.LastName()
	case 3:
		t = capitalize(f.Noun()) + " TV"
	default:
		t = "The " + capitalize(f.Adjective()) + " " + capitalize(f.Animal())
	}
	if r.float() < edge {
		t = edgeText(r, t)
	}
	return t
}

// edgeText dresses a text as an edge case, one of fixtures.EdgeTexts with
// the text after it (so that titles stay apart).
func edgeText(r *rng, t string) string {
	return fixtures.EdgeTexts[r.intn(len(fixtures.EdgeTexts))] + " " + t
}

// seedWorld makes the channels and the videos that exist before the
// history starts at t0, and schedules their first polls.
func (w *World) seedWorld(t0 int64) {
	edge := w.edgeRate
	w.channels = make([]*channel, w.cfg.Channels)
	w.watchers = make([][]int32, w.cfg.Channels)
	used := make(map[string]bool, w.cfg.Channels)
	for i := range w.channels {
		r := w.rngFor(kindWorld, uint64(i), 0, 0) // kindWorld: not a poll's stream
		c := &channel{
			Offset:  uint32(r.intn(int(tickMs))),
			Growth:  r.between(0.005, 0.03),
			Uploads: r.between(0.3, 2.5),
		}
		for {
			c.ID = "ch_" + randomHex(&r, 12)
			c.PlatformID = "UC" + randomID(&r, platformChannelLen)
			if !used[c.ID] && !used[c.PlatformID] {
				used[c.ID], used[c.PlatformID] = true, true
				break
			}
		}
		c.Title = channelTitle(&r, edge)
		if r.float() >= edge {
			c.Avatar = avatarURL(&r, c.PlatformID)
		}
		c.Subs = int64(math.Pow(10, r.between(2.5, 7)))
		c.SeenSubs = c.Subs
		if r.float() < edge {
			c.SeenSubs = -1
		}
		c.Milestone = milestone(c.Subs)
		c.LastPoll = t0 - hourMs
		c.NextTick = firstTick(t0, c.Offset)
		c.encodeRef()
		w.channels[i] = c
		w.sched.push(c.NextTick, schedKey(c.Offset, uint32(i)|channelBit))
		// The catalog: videos published before the history, first seen at t0.
		for range 4 + r.intn(9) {
			ageMs := int64(r.between(float64(hourMs), 180*float64(dayMs)))
			w.addVideo(&r, int32(i), t0-ageMs, t0, firstTick(t0, 0), edge)
		}
	}
}

// addVideo creates a video of channel ci published at pub and first seen at
// `at`, with counters as they stand then, and schedules its first poll at
// the given tick.
func (w *World) addVideo(r *rng, ci int32, pub, at, first int64, edge float64) *video {
	c := w.channels[ci]
	v := &video{
		ID:          w.newVideoID(r, edge),
		Channel:     ci,
		Offset:      uint32(r.intn(int(tickMs))),
		PublishedAt: pub,
		FirstSeenAt: at,
		LastPoll:    at,
		MembersOnly: r.float() < 0.05,
		Reach:       max(50, float64(c.Subs)*r.between(0.02, 0.6)*math.Exp(r.between(-1, 1))),
		Tau:         r.between(12, 96),
		LikeRate:    r.between(0.01, 0.06),
		CommentRate: r.between(0.001, 0.006),
		SHour:       math.MinInt64,
		// Room for about two days of hourly samples; grown rarely after.
		Samples: make([]byte, 0, 512),
	}
	v.Title = videoTitle(r, edge)
	v.Thumb = thumbURL(r, v.ID, edge)
	v.grow(r, at)
	if r.float() < edge {
		// Counts at the edge of what JSON readers hold exactly.
		v.Views = MaxCount - int64(r.intn(1_000_000))
		v.Likes = MaxCount - int64(r.intn(1_000_000_000))
		v.Comments = MaxCount/int64(1+r.intn(1000)) - int64(r.intn(1000))
	}
	if r.float() < edge {
		v.Hidden = uint8(1 + r.intn(7))
	}
	v.NextTick = max(first, firstTick(at, v.Offset))
	idx := int32(len(w.videos))
	w.videos = append(w.videos, v)
	w.videoByID[v.ID] = idx
	w.sched.push(v.NextTick, schedKey(v.Offset, uint32(idx)))
	v.sample(at)
	return v
}

// viewsAt is the expected view count at an age, in ms.
func (v *video) viewsAt(ageMs int64) float64 {
	if ageMs <= 0 {
		return 0
	}
	h := float64(ageMs) / float64(hourMs)
	// Most views come early; a long tail keeps a video growing.
	early := 1.0
	if h < 40*v.Tau { // beyond, e^-40 is below float64's resolution of 1
		early = 1 - math.Exp(-h/v.Tau)
	}
	return v.Reach * (early + 0.001*h/24)
}

// grow moves the counters to time `to`, with noise, never down.
func (v *video) grow(r *rng, to int64) {
	e := v.viewsAt(to - v.PublishedAt)
	d := (e - v.Expect) * r.between(0.6, 1.4)
	v.Expect = max(e, v.Expect)
	if d <= 0 {
		return
	}
	v.Views = addCount(v.Views, d, r)
	v.Likes = addCount(v.Likes, d*v.LikeRate*r.between(0.5, 1.5), r)
	v.Comments = addCount(v.Comments, d*v.CommentRate*r.between(0.5, 1.5), r)
}

// addCount adds d, rounded at random so that small rates still add up, and
// caps at MaxCount.
func addCount(n int64, d float64, r *rng) int64 {
	inc := int64(d + r.float())
	if inc <= 0 {
		return n
	}
	if n > MaxCount-inc {
		return MaxCount
	}
	return n + inc
}

// milestone is n rounded down to one significant digit.
func milestone(n int64) int64 {
	if n < 1 {
		return 0
	}
	p := int64(1)
	for p <= n/10 {
		p *= 10
	}
	return n / p * p
}
