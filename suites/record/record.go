// Package record records an account of any server of the Tracked-Channel
// Monitoring API into a world the simulator serves (tcmkit record, then
// tcmkit simulate --world FILE): it walks the Pro account's whole feed, and
// a free account's if given, and asks tracked videos for every video it
// saw, 20 ids a request.
//
// It is a polite client of the contract: at most Rate requests a minute
// per key (the contract's 20), every Retry-After honoured, no redirect
// followed (keys go to the target's origin only), every answer bounded
// (the suite's client), and every line it writes redacted. It keeps its
// progress in FILE.partial (written whole and renamed, so a crash leaves
// the last one intact) and resumes from it; a resumed recording equals
// one made in one go. The recording holds no key: the simulator gives its
// accounts fresh ones.
package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/world"
	"github.com/tcmkit/tcmkit/suites/client"
)

// Defaults and bounds of a recording.
const (
	DefaultMaxEvents   = 100_000
	DefaultMaxRequests = 5_000
	// DefaultMaxBytes bounds the answers a recording keeps, so that the
	// world it writes stays within what the simulator imports
	// (simulator.DefaultMaxImportBytes).
	DefaultMaxBytes = simulator.DefaultMaxImportBytes / 2
	// DefaultMaxWait is the longest Retry-After honoured; a longer one
	// stops the recording, to be resumed later.
	DefaultMaxWait = 10 * time.Minute
	// pageLimit is the feed's largest page.
	pageLimit = schemas.MaxPageSize
	// idsPerRequest is the tracked videos' most ids.
	idsPerRequest = schemas.MaxVideoIDs
	// saveEvery is how often progress is written, at most, besides at the end.
	saveEvery = 5 * time.Second
)

// Clock is the recorder's time: Sleep waits for the rate limit. A test
// gives one that moves a simulator's manual clock.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }
func (wallClock) Sleep(ctx context.Context, d time.Duration) error {
	return client.WallClock{}.Wait(ctx, d)
}

// Recorder records one target. Zero bounds are the defaults; -1 is none.
type Recorder struct {
	Target  string // the server's base URL
	ProKey  string
	FreeKey string // optional: the free account's feed (its tracking)
	Out     string // the recording; progress goes to Out+".partial"

	MaxEvents   int
	MaxRequests int
	MaxBytes    int64
	MaxWait     time.Duration
	// Rate is the requests a minute per key (0: the contract's 20).
	Rate int

	HTTP  *http.Client // nil: the suite client's own
	Clock Clock        // nil: the wall clock
	// Log receives the progress lines, redacted; nil discards them.
	Log io.Writer
	// AfterRequest, when set, runs after each request is counted (tests
	// interrupt a recording with it).
	AfterRequest func(requests int)
}

// Result is what a finished (or stopped) recording did.
type Result struct {
	Recording simulator.Recording
	Bytes     int64 // of the recording written
	Took      time.Duration
	Waited    time.Duration // waiting for the rate limit
	Resumed   bool
}

// progressFormat names the layout of the .partial file.
const progressFormat = "tcmkit-record-progress/1"

// walk is one account's feed walk.
type walk struct {
	Plan   world.Plan `json:"plan"`
	Cursor string     `json:"cursor"`
	Pages  int        `json:"pages"`
	Done   bool       `json:"done"`
	// Events are as received, newest first: strings, so that the bytes
	// survive a save and a resume exactly.
	Events []string `json:"events"`
}

// progress is the .partial file: everything seen so far and where each
// walk stands. It holds no key.
type progress struct {
	Format   string   `json:"format"`
	Origin   string   `json:"origin"`
	Walks    []*walk  `json:"walks"`
	Asked    int      `json:"asked"` // video ids asked for, in order
	Entries  []string `json:"entries"`
	Missing  int      `json:"missing"`
	Requests int      `json:"requests"`
	Bytes    int64    `json:"bytes"`
	Now      int64    `json:"now"` // the newest server time seen
	Bounded  string   `json:"bounded,omitempty"`
}

// origin is the target's scheme://host[:port], checked: a key is sent to
// nothing else.
func origin(target string) (string, error) {
	u, err := url.Parse(target)
	switch {
	case err != nil:
		return "", fmt.Errorf("--target: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("--target %q: want an http:// or https:// URL", target)
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("--target %q: want scheme://host[:port][/base path], without user, query or fragment", target)
	}
	return u.Scheme + "://" + u.Host, nil
}

// httpClient is the client for a target's origin. A proxy would read the
// key of a plain-HTTP request, so none is used for one: the key goes to
// the target's origin and nowhere else (through HTTPS a proxy only
// tunnels). Redirects are not followed either way (the suite's client).
func httpClient(origin string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if strings.HasPrefix(origin, "http://") {
		tr.Proxy = nil
	}
	tr.MaxResponseHeaderBytes = 64 << 10 // as the suite's client bounds them
	return &http.Client{Transport: tr}
}

type run struct {
	r       *Recorder
	c       *client.Client
	clock   Clock
	log     io.Writer
	red     *redact.Redactor
	p       *progress
	uses    map[string][]time.Time // key → send times within the window
	saved   time.Time
	waited  time.Duration
	started time.Time
}

// Run records until done, a bound, an error or ctx's end. A stopped
// recording keeps its progress in Out.partial and says how to resume.
func (r *Recorder) Run(ctx context.Context) (*Result, error) {
	o, err := origin(r.Target)
	if err != nil {
		return nil, err
	}
	if r.ProKey == "" {
		return nil, errors.New("--pro-key is required: the tracked videos need a Pro account")
	}
	if r.Out == "" {
		return nil, errors.New("--out is required")
	}
	red := redact.New(r.ProKey, r.FreeKey)
	logw := io.Discard
	var rw *redact.Writer
	if r.Log != nil {
		rw = red.Writer(r.Log)
		defer rw.Flush()
		logw = rw
	}
	ru := &run{r: r, log: logw, red: red, uses: map[string][]time.Time{}, clock: r.Clock, started: time.Now()}
	if ru.clock == nil {
		ru.clock = wallClock{}
	}
	hc := r.HTTP
	if hc == nil {
		hc = httpClient(o)
	}
	ru.c = &client.Client{BaseURL: r.Target, HTTP: hc, Redact: red.String, MaxRetries: 1}
	defer ru.c.Close()
	res := &Result{}
	p, err := loadProgress(r.Out + ".partial")
	switch {
	case err == nil && p.Origin != o:
		return nil, fmt.Errorf("%s.partial is a recording of %s, not of %s: remove it, or record that target", r.Out, p.Origin, o)
	case err == nil:
		res.Resumed = true
		fmt.Fprintf(logw, "record: resuming from %s.partial (%d requests done)\n", r.Out, p.Requests)
	case errors.Is(err, os.ErrNotExist):
		p = &progress{Format: progressFormat, Origin: o, Walks: []*walk{{Plan: world.Pro}}}
		if r.FreeKey != "" {
			p.Walks = append(p.Walks, &walk{Plan: world.Free})
		}
	default:
		return nil, err
	}
	ru.p = p
	err = ru.record(ctx)
	if err != nil {
		if serr := ru.save(); serr != nil {
			return nil, errors.Join(err, serr)
		}
		return nil, fmt.Errorf("%w (progress kept in %s.partial: the same command resumes it)", err, r.Out)
	}
	rec, n, err := ru.write()
	if err != nil {
		return nil, err
	}
	res.Recording, res.Bytes, res.Took, res.Waited = rec, n, time.Since(ru.started), ru.waited
	fmt.Fprintf(logw, "record: wrote %s: %s\n", r.Out, rec.String())
	return res, nil
}

func (ru *run) bound(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// record walks the feeds, then asks for the videos.
func (ru *run) record(ctx context.Context) error {
	p, r := ru.p, ru.r
	maxEvents := ru.bound(r.MaxEvents, DefaultMaxEvents)
	for _, w := range p.Walks {
		key := r.ProKey
		if w.Plan == world.Free {
			key = r.FreeKey
		}
		for !w.Done && p.Bounded == "" {
			if maxEvents >= 0 && ru.events() >= maxEvents {
				p.Bounded = "--max-events"
				break
			}
			q := url.Values{"limit": {strconv.Itoa(pageLimit)}}
			if w.Pages > 0 {
				q.Set("cursor", w.Cursor)
			}
			body, err := ru.send(ctx, client.Get(schemas.PathFeed, q, client.Bearer(key)), key, fmt.Sprintf("%s feed, page %d", w.Plan, w.Pages+1))
			if err != nil || body == nil {
				return err
			}
			var page struct {
				Events     []json.RawMessage `json:"events"`
				NextCursor *string           `json:"nextCursor"`
			}
			if err := json.Unmarshal(body, &page); err != nil {
				return fmt.Errorf("%s feed, page %d: %w", w.Plan, w.Pages+1, err)
			}
			if maxEvents >= 0 {
				page.Events = page.Events[:min(len(page.Events), maxEvents-ru.events())]
			}
			for _, e := range page.Events {
				w.Events = append(w.Events, string(e))
			}
			w.Pages++
			if page.NextCursor == nil || len(page.Events) == 0 {
				w.Done = true
			} else {
				w.Cursor = *page.NextCursor
			}
			ru.progressLine(fmt.Sprintf("%s feed, page %d", w.Plan, w.Pages))
			ru.maybeSave()
		}
	}
	ids := ru.videoIDs()
	for p.Asked < len(ids) && p.Bounded == "" {
		batch := ids[p.Asked:min(p.Asked+idsPerRequest, len(ids))]
		doc, _ := json.Marshal(map[string][]string{"videoIds": batch})
		body, err := ru.send(ctx, client.PostJSON(schemas.PathVideos, string(doc), client.Bearer(r.ProKey)), r.ProKey,
			fmt.Sprintf("tracked videos %d-%d of %d", p.Asked+1, p.Asked+len(batch), len(ids)))
		if err != nil || body == nil {
			return err
		}
		var ans struct {
			Videos  []json.RawMessage `json:"videos"`
			Missing []string          `json:"missingVideoIds"`
		}
		if err := json.Unmarshal(body, &ans); err != nil {
			return fmt.Errorf("tracked videos: %w", err)
		}
		for _, e := range ans.Videos {
			p.Entries = append(p.Entries, string(e))
		}
		p.Missing += len(ans.Missing)
		p.Asked += len(batch)
		ru.progressLine(fmt.Sprintf("tracked videos %d-%d of %d", p.Asked-len(batch)+1, p.Asked, len(ids)))
		ru.maybeSave()
	}
	return nil
}

func (ru *run) events() int {
	n := 0
	for _, w := range ru.p.Walks {
		n += len(w.Events)
	}
	return n
}

// videoIDs are the videos the feeds named, in the order first seen: the
// Pro feed first, newest first.
func (ru *run) videoIDs() []string {
	var ids []string
	seen := map[string]bool{}
	for _, w := range ru.p.Walks {
		for _, raw := range w.Events {
			var e struct {
				Video *struct {
					ID string `json:"platformVideoId"`
				} `json:"video"`
			}
			if json.Unmarshal([]byte(raw), &e) == nil && e.Video != nil && e.Video.ID != "" && !seen[e.Video.ID] {
				seen[e.Video.ID] = true
				ids = append(ids, e.Video.ID)
			}
		}
	}
	return ids
}

// send sends one request paced to Rate a minute per key, honouring every
// Retry-After; it returns the 200 body, or nil with a nil error when a
// bound stopped the recording.
func (ru *run) send(ctx context.Context, req client.Request, key, what string) ([]byte, error) {
	p, r := ru.p, ru.r
	maxReq := ru.bound(r.MaxRequests, DefaultMaxRequests)
	maxBytes := r.MaxBytes
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	maxWait := r.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	for failures := 0; ; {
		if maxReq >= 0 && p.Requests >= maxReq {
			p.Bounded = "--max-requests"
			return nil, nil
		}
		if err := ru.pace(ctx, key); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		resp, err := ru.c.Send(ctx, req)
		ru.c.Take() // the transcript is not kept: a recording is long
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		p.Requests++
		if t, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			p.Now = max(p.Now, t.UnixMilli())
		}
		if r.AfterRequest != nil {
			r.AfterRequest(p.Requests)
		}
		switch {
		case resp.Status == http.StatusOK:
			body, err := resp.Bytes()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			if maxBytes >= 0 && p.Bytes+int64(len(body)) > maxBytes {
				p.Bounded = "--max-bytes"
				return nil, nil
			}
			p.Bytes += int64(len(body))
			// A server that puts a key into what it serves (a title, a
			// cursor) does not get it into the recording: what no longer
			// validates once redacted stops the recording instead.
			return []byte(ru.red.String(string(body))), nil
		case resp.Status == http.StatusTooManyRequests:
			v := resp.Header.Get("Retry-After")
			wait, perr := client.ParseRetryAfter(v, client.ServerTime(resp.Header, ru.clock.Now()))
			if perr != nil {
				// No readable Retry-After (the contract wants one): a whole
				// window is what the limit can ask for.
				wait = schemas.RateWindow
			}
			if wait > maxWait {
				return nil, fmt.Errorf("%s: 429 with Retry-After %q, more than --max-wait %s: stopped", what, v, maxWait)
			}
			fmt.Fprintf(ru.log, "record: %s: 429, waiting %s as Retry-After %q says\n", what, client.Seconds(wait), v)
			if err := ru.sleep(ctx, wait); err != nil {
				return nil, err
			}
		case resp.Status >= 500 && failures < 3:
			failures++
			wait := time.Duration(1<<failures) * time.Second
			fmt.Fprintf(ru.log, "record: %s: %d, trying again in %s\n", what, resp.Status, client.Seconds(wait))
			if err := ru.sleep(ctx, wait); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s: %s answered %d: %s", what, req, resp.Status, resp.Excerpt())
		}
	}
}

func (ru *run) sleep(ctx context.Context, d time.Duration) error {
	ru.waited += d
	return ru.clock.Sleep(ctx, d)
}

// pace waits until key may be sent without passing Rate a minute, and
// notes its use.
func (ru *run) pace(ctx context.Context, key string) error {
	rate := ru.r.Rate
	if rate <= 0 {
		rate = schemas.FeedRequestsPerMinute
	}
	now := ru.clock.Now()
	uses := ru.recent(key, now)
	if len(uses) >= rate {
		// The oldest use leaves the window then; a little after, so that
		// a server counting the edge in still lets it through.
		wait := uses[len(uses)-rate].Add(schemas.RateWindow + 100*time.Millisecond).Sub(now)
		if wait > 0 {
			fmt.Fprintf(ru.log, "record: %d requests in the last minute with this key: waiting %s\n", rate, client.Seconds(wait.Round(100*time.Millisecond)))
			if err := ru.sleep(ctx, wait); err != nil {
				return err
			}
			now = ru.clock.Now()
		}
	}
	ru.uses[key] = append(ru.recent(key, now), now)
	return nil
}

func (ru *run) recent(key string, now time.Time) []time.Time {
	uses := ru.uses[key]
	i := 0
	for i < len(uses) && !uses[i].After(now.Add(-schemas.RateWindow)) {
		i++
	}
	return uses[i:]
}

// progressLine says where the recording stands and how long is left, at
// the least: the requests known to remain at the pace allowed.
func (ru *run) progressLine(what string) {
	p := ru.p
	left := 0
	for _, w := range p.Walks {
		if !w.Done {
			left++
		}
	}
	ids := len(ru.videoIDs())
	left += (ids - p.Asked + idsPerRequest - 1) / idsPerRequest
	rate := ru.r.Rate
	if rate <= 0 {
		rate = schemas.FeedRequestsPerMinute
	}
	// Beyond what the window still allows now, each key's requests go at
	// rate a minute.
	free := rate - len(ru.recent(ru.r.ProKey, ru.clock.Now()))
	eta := time.Duration(max(left-free, 0)) * schemas.RateWindow / time.Duration(rate)
	fmt.Fprintf(ru.log, "record: %s done: %d requests, %d events, %d of %d videos asked; at least %d requests left, about %s\n",
		what, p.Requests, ru.events(), p.Asked, ids, left, client.Seconds(eta.Round(time.Second)))
}

func (ru *run) maybeSave() {
	if time.Since(ru.saved) >= saveEvery {
		if err := ru.save(); err != nil {
			fmt.Fprintf(ru.log, "record: %v\n", err)
		}
	}
}

// save writes the progress whole, then renames it into place.
func (ru *run) save() error {
	ru.saved = time.Now()
	b, err := json.Marshal(ru.p)
	if err != nil {
		return err
	}
	return writeAtomic(ru.r.Out+".partial", b, 0o600)
}

// writeAtomic writes a file whole under a temporary name, then renames it:
// a crash leaves the previous file or the new one, never half of one.
func writeAtomic(path string, b []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(mode) // the recording holds no key: others may read it
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func loadProgress(path string) (*progress, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p progress
	if err := json.Unmarshal(b, &p); err != nil || p.Format != progressFormat || len(p.Walks) == 0 {
		return nil, fmt.Errorf("%s is not the progress of a recording (remove it to start again)", path)
	}
	return &p, nil
}

// unknowns is what no recording holds, and what this one does not.
func (ru *run) unknowns() []string {
	u := []string{
		"subscriber counts between milestones: a channel's count is known from its last subscriber_change only",
		"channels the accounts track that never appeared in a feed",
		"stat samples the API did not serve: before the Pro history window, and between those it served",
		"counters of videos no tracked-videos entry showed (a free account's channels): served as null",
		"account ids and plans beyond Pro and free: the accounts are acc_1 (Pro) and acc_2 (free)",
	}
	if ru.r.FreeKey == "" {
		u = append(u, "the free account's tracking (no --free-key): it tracks the Pro account's channels")
	}
	if ru.p.Bounded != "" {
		u = append(u, "events older than the last page read, and videos not asked for: "+ru.p.Bounded+" stopped the recording")
	}
	return u
}

// write builds the world from what was seen and writes the recording.
func (ru *run) write() (simulator.Recording, int64, error) {
	p := ru.p
	o := world.Observed{Now: p.Now, MaxEvents: max(ru.bound(ru.r.MaxEvents, DefaultMaxEvents), 0)}
	var lists [][]json.RawMessage
	for _, w := range p.Walks {
		l := raws(w.Events)
		slices.Reverse(l) // oldest first
		lists = append(lists, l)
		acc := world.Account{ID: "acc_" + strconv.Itoa(len(o.Accounts)+1), Plan: w.Plan, Channels: channelsOf(w.Events)}
		o.Accounts = append(o.Accounts, acc)
	}
	for _, en := range p.Entries {
		var e struct {
			Video struct {
				Channel struct {
					ID string `json:"id"`
				} `json:"channel"`
			} `json:"video"`
		}
		if json.Unmarshal([]byte(en), &e) == nil && !slices.Contains(o.Accounts[0].Channels, e.Video.Channel.ID) {
			o.Accounts[0].Channels = append(o.Accounts[0].Channels, e.Video.Channel.ID)
		}
	}
	if len(p.Walks) == 1 {
		o.Accounts = append(o.Accounts, world.Account{ID: "acc_2", Plan: world.Free, Channels: o.Accounts[0].Channels})
	}
	o.Events = merge(lists...)
	o.Entries = raws(p.Entries)
	reshaped := 0
	for _, raw := range o.Events {
		if _, changed, err := world.CanonicalEvent(raw); err == nil && changed {
			reshaped++
		}
	}
	wd, err := world.Recorded(o)
	if err != nil {
		return simulator.Recording{}, 0, err
	}
	st := wd.Stats()
	rec := simulator.Recording{
		Origin: p.Origin, RecordedAt: wd.Now().UnixMilli(), Requests: p.Requests, Events: st.Events, Videos: st.Videos,
		Complete: p.Bounded == "", Reshaped: reshaped, Unknown: ru.unknowns(), Shape: simulator.RecordingShape,
	}
	var sb strings.Builder
	if err := writeRecording(&sb, wd, &rec); err != nil {
		return rec, 0, err
	}
	if err := writeAtomic(ru.r.Out, []byte(sb.String()), 0o644); err != nil {
		return rec, 0, err
	}
	os.Remove(ru.r.Out + ".partial")
	return rec, int64(sb.Len()), nil
}

// writeRecording writes the simulator's import format (GET /_control/world)
// with no key: the world last, as the import wants it.
func writeRecording(w io.Writer, wd *world.World, rec *simulator.Recording) error {
	head, err := json.Marshal(struct {
		Format     string               `json:"format"`
		Now        int64                `json:"now"`
		KeyCounter uint64               `json:"keyCounter"`
		Seeded     simulator.Keys       `json:"seeded"` // empty: no key is stored
		Keys       []struct{}           `json:"keys"`
		Recording  *simulator.Recording `json:"recording"`
	}{simulator.ExportFormat, rec.RecordedAt, 0, simulator.Keys{}, []struct{}{}, rec})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, strings.TrimSuffix(string(head), "}")+`,"world":`); err != nil {
		return err
	}
	if err := wd.Export(w); err != nil {
		return err
	}
	_, err = io.WriteString(w, "}\n")
	return err
}

func raws(ss []string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

// channelsOf lists the channel ids events show, in order first seen.
func channelsOf(events []string) []string {
	var ids []string
	for _, raw := range events {
		var e struct {
			Channel struct {
				ID string `json:"id"`
			} `json:"channel"`
		}
		if json.Unmarshal([]byte(raw), &e) == nil && e.Channel.ID != "" && !slices.Contains(ids, e.Channel.ID) {
			ids = append(ids, e.Channel.ID)
		}
	}
	return ids
}

// merge merges feeds (each oldest first) into one order that keeps each
// feed's: an event two feeds share is one event, and of two events only
// one feed shows, the older goes first.
func merge(lists ...[]json.RawMessage) []json.RawMessage {
	type ev struct {
		id  string
		at  int64
		raw json.RawMessage
	}
	parse := func(l []json.RawMessage) []ev {
		out := make([]ev, 0, len(l))
		for _, raw := range l {
			var e struct {
				ID        string `json:"id"`
				CreatedAt int64  `json:"createdAt"`
			}
			_ = json.Unmarshal(raw, &e)
			out = append(out, ev{e.ID, e.CreatedAt, raw})
		}
		return out
	}
	var out []ev
	for _, l := range lists {
		b := parse(l)
		inOut, inB := map[string]bool{}, map[string]bool{}
		for _, e := range out {
			inOut[e.id] = true
		}
		for _, e := range b {
			inB[e.id] = true
		}
		var m []ev
		done := map[string]bool{}
		take := func(e ev) {
			if !done[e.id] {
				done[e.id] = true
				m = append(m, e)
			}
		}
		i, j := 0, 0
		for i < len(out) || j < len(b) {
			switch {
			case j == len(b):
				take(out[i])
				i++
			case i == len(out):
				take(b[j])
				j++
			case out[i].id == b[j].id:
				take(out[i])
				i, j = i+1, j+1
			case inB[out[i].id] && !inOut[b[j].id]:
				take(b[j]) // b's own event comes before the shared one
				j++
			case inOut[b[j].id] && !inB[out[i].id]:
				take(out[i])
				i++
			case b[j].at < out[i].at:
				take(b[j])
				j++
			default:
				take(out[i])
				i++
			}
		}
		out = m
	}
	raw := make([]json.RawMessage, len(out))
	for i, e := range out {
		raw[i] = e.raw
	}
	return raw
}
