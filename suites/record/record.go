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
// the last one intact; package outfile writes both files) and resumes from it; a resumed recording equals
// one made in one go. The recording holds no key: the simulator gives its
// accounts fresh ones.
package record

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/outfile"
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
	// DefaultMaxTotalWait bounds what the server's waits add up to (every
	// Retry-After honoured, every backoff after a 5xx): past it, the
	// recording ends, cut and saying so. A recording that keeps to the
	// rate limit meets few.
	DefaultMaxTotalWait = time.Hour
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

	MaxEvents    int
	MaxRequests  int
	MaxBytes     int64
	MaxWait      time.Duration // the longest one Retry-After honoured
	MaxTotalWait time.Duration // what the server's waits may add up to
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

// SettingError is a setting of a Recorder that Run refuses before any
// request: a command exits 2 for it.
type SettingError struct{ Reason string }

func (e *SettingError) Error() string { return e.Reason }

// Check says what is wrong with r's settings, as a *SettingError: a
// target that is no http(s) origin (or holds a user, a query or a
// fragment), no Pro key, no Out, a bound below -1, a negative wait, an
// Out that cannot be written (package outfile).
func (r *Recorder) Check() error {
	if err := client.CheckTarget(r.Target, r.ProKey, r.FreeKey); err != nil {
		return &SettingError{err.Error()}
	}
	if r.ProKey == "" {
		return &SettingError{"--pro-key is required: the tracked videos need a Pro account"}
	}
	if r.Out == "" {
		return &SettingError{"--out is required"}
	}
	for _, b := range []struct {
		name string
		v    int64
	}{{"max-events", int64(r.MaxEvents)}, {"max-requests", int64(r.MaxRequests)}, {"max-bytes", r.MaxBytes}} {
		if b.v < -1 {
			return &SettingError{fmt.Sprintf("invalid value %d for --%s: want 0 (the default), -1 (none) or more", b.v, b.name)}
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"max-wait", r.MaxWait}, {"max-total-wait", r.MaxTotalWait}} {
		if d.v < 0 {
			return &SettingError{fmt.Sprintf("invalid value %s for --%s: want 0 (the default) or more", d.v, d.name)}
		}
	}
	// Where it will write, tried now rather than after an hour of
	// recording: a directory there, or one that cannot be written, is a
	// bad --out.
	for _, p := range []string{r.Out, r.Out + ".partial"} {
		if err := outfile.Check(p); err != nil {
			return &SettingError{"--out: " + err.Error()}
		}
	}
	return nil
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
		// Quoted without its password: an error line is no place for it.
		return "", fmt.Errorf("--target %q: want scheme://host[:port][/base path], without user, query or fragment", u.Redacted())
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
	r         *Recorder
	c         *client.Client
	clock     Clock
	log       io.Writer
	red       *redact.Redactor
	p         *progress
	uses      map[string][]time.Time // key → send times within the window
	ids       []string               // the videos the feeds named, in order first seen
	seenIDs   map[string]bool
	sums      map[string]uint64 // event id → hash of its canonical form, as first shown
	clashes   int               // events shown with an earlier event's id and other content
	newest    int64             // the newest createdAt shown
	date      time.Time         // the last answer's Date, not yet judged
	wrongDate bool              // a Date was found implausible (said once)
	rawCursor string            // the nextCursor of the last answer as the server sent it, when redaction changed the answer
	saved     time.Time
	waited    time.Duration // all waits: the pace, and what the server asked
	asked     time.Duration // what the server asked: Retry-After, backoff after a 5xx
	started   time.Time
}

// Run records until done, a bound, an error or ctx's end. A stopped
// recording keeps its progress in Out.partial and says how to resume.
func (r *Recorder) Run(ctx context.Context) (*Result, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	o, _ := origin(r.Target)
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
	// The client's errors name no setting: record has no --request-timeout
	// nor --max-body (its bounds are the client's defaults).
	ru.c = &client.Client{BaseURL: r.Target, HTTP: hc, Redact: red.String, MaxRetries: 1, Flags: &client.Flags{}}
	defer ru.c.Close()
	res := &Result{}
	p, err := loadProgress(r.Out + ".partial")
	switch {
	case err == nil && p.Origin != o:
		return nil, fmt.Errorf("%s.partial is a recording of %s, not of %s: remove it, or record that target", r.Out, p.Origin, o)
	case err == nil:
		if err := ru.resumable(p); err != nil {
			return nil, err
		}
		res.Resumed = true
		if p.Bounded != "--max-events" {
			// A bound met before an answer was kept is met again, or not,
			// with this run's bounds (a --max-events cut a page short).
			p.Bounded = ""
		}
		fmt.Fprintf(logw, "record: resuming from %s.partial (%d requests done)\n", r.Out, p.Requests)
	case errors.Is(err, os.ErrNotExist):
		p = &progress{Format: progressFormat, Origin: o, Walks: []*walk{{Plan: world.Pro}}, Keys: map[world.Plan]string{world.Pro: redact.Form(r.ProKey)}}
		if r.FreeKey != "" {
			p.Walks = append(p.Walks, &walk{Plan: world.Free})
			p.Keys[world.Free] = redact.Form(r.FreeKey)
		}
	default:
		return nil, err
	}
	ru.p = p
	ru.seenIDs, ru.sums = map[string]bool{}, map[string]uint64{}
	for _, w := range p.Walks {
		for i, raw := range w.Events {
			ru.noteVideo(raw)
			canon, _, err := world.CanonicalEvent([]byte(raw))
			if err != nil {
				return nil, fmt.Errorf("%s.partial: %s feed, event %d%s: %w: no world holds it (remove the file to record again)", r.Out, w.Plan, i+1, idOf([]byte(raw)), err)
			}
			ru.noteEvent(w, i, canon, false)
		}
	}
	err = ru.record(ctx)
	if err != nil {
		if serr := ru.save(); serr != nil {
			return nil, errors.Join(err, serr)
		}
		return nil, fmt.Errorf("%w (progress kept in %s.partial: the same command resumes it)", err, r.Out)
	}
	rec, n, err := ru.write(ctx)
	if err != nil {
		if serr := ru.save(); serr != nil {
			return nil, errors.Join(err, serr)
		}
		return nil, fmt.Errorf("%w (what was recorded is kept in %s.partial: the same command writes it again, and ends the same way while the cause is there; remove it to record again)", err, r.Out)
	}
	res.Recording, res.Bytes, res.Took, res.Waited = rec, n, time.Since(ru.started), ru.waited
	fmt.Fprintf(logw, "record: wrote %s: %s\n", r.Out, rec.String())
	return res, nil
}

// resumable says at once why the progress p cannot be resumed by this
// run: it was begun with another key of a plan (another account: its
// feed and this one's tracked videos would make one world of two
// accounts), or a walk stopped where the server's cursor held a key (the
// .partial keeps it redacted, which the server cannot read).
func (ru *run) resumable(p *progress) error {
	r := ru.r
	for _, k := range []struct {
		plan world.Plan
		key  string
		flag string
	}{{world.Pro, r.ProKey, "--pro-key"}, {world.Free, r.FreeKey, "--free-key"}} {
		if was, ok := p.Keys[k.plan]; ok && k.key != "" && was != redact.Form(k.key) {
			return &SettingError{fmt.Sprintf("%s.partial was begun with another %s (%s, not %s): a recording is one account's; resume with that key, or remove %s.partial to start over", r.Out, k.flag, was, redact.Form(k.key), r.Out)}
		}
	}
	for _, w := range p.Walks {
		if w.KeyInCursor && !w.Done {
			return &SettingError{fmt.Sprintf("%s.partial cannot be resumed: the server's cursor for page %d of the %s feed holds a key, and was kept redacted, which the server cannot read; remove %s.partial to start over (a recording in one run goes on with the cursor itself)", r.Out, w.Pages+1, w.Plan, r.Out)}
		}
	}
	return nil
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
		cursors := map[string]bool{} // a cursor given twice is a cycle
		for !w.Done && p.Bounded == "" {
			if maxEvents >= 0 && ru.events() >= maxEvents {
				p.Bounded = "--max-events"
				break
			}
			q := url.Values{"limit": {strconv.Itoa(pageLimit)}}
			if w.Pages > 0 {
				q.Set("cursor", cmp.Or(w.raw, w.Cursor))
			}
			body, err := ru.send(ctx, client.Get(schemas.PathFeed, q, client.Bearer(key)), key, fmt.Sprintf("%s feed, page %d", w.Plan, w.Pages+1))
			if err != nil || body == nil {
				return err
			}
			var page struct {
				Events     []json.RawMessage `json:"events"`
				NextCursor *string           `json:"nextCursor"`
			}
			where := fmt.Sprintf("%s feed, page %d", w.Plan, w.Pages+1)
			if err := json.Unmarshal(body, &page); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			if maxEvents >= 0 {
				page.Events = page.Events[:min(len(page.Events), maxEvents-ru.events())]
			}
			// What no world can hold stops the recording now, named, and
			// the page is not kept: a resume asks for it again.
			canon := make([][]byte, len(page.Events))
			for i, e := range page.Events {
				c, _, err := world.CanonicalEvent(e)
				if err != nil {
					return fmt.Errorf("%s, event %d%s: %w: no world holds it (what came before is kept)", where, i+1, idOf(e), err)
				}
				canon[i] = c
			}
			for i, e := range page.Events {
				w.Events = append(w.Events, string(e))
				ru.noteVideo(string(e))
				ru.noteEvent(w, len(w.Events)-1, canon[i], true)
			}
			ru.judgeDate()
			w.Pages++
			switch {
			case page.NextCursor == nil || len(page.Events) == 0:
				w.Done = true
			case cursors[*page.NextCursor]:
				return fmt.Errorf("%s feed, page %d: the nextCursor of an earlier page again: the walk would never end", w.Plan, w.Pages)
			default:
				cursors[*page.NextCursor] = true
				w.Cursor, w.raw = *page.NextCursor, ru.rawCursor
				w.KeyInCursor = w.raw != "" && w.raw != w.Cursor
			}
			ru.progressLine(fmt.Sprintf("%s feed, page %d", w.Plan, w.Pages))
			ru.maybeSave()
		}
	}
	ids := ru.ids
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
		for i, e := range ans.Videos {
			if err := world.CheckEntry(e); err != nil {
				return fmt.Errorf("tracked videos %d-%d of %d, video %d: %w: no world holds it (what came before is kept)", p.Asked+1, p.Asked+len(batch), len(ids), i+1, err)
			}
		}
		for _, e := range ans.Videos {
			p.Entries = append(p.Entries, string(e))
		}
		ru.judgeDate()
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

// noteEvent notes an event a feed showed, w's i-th, in its canonical form
// (world.CanonicalEvent): its time, and its id with a hash of that form. An id shown before with other content
// is a clash (the contract's EVENT-ID-UNIQUE broken): no world holds both,
// so write drops the later one and says so; say tells it now, the first
// few times. The same event shown again (by both feeds, or twice by one)
// is one event.
func (ru *run) noteEvent(w *walk, i int, canon []byte, say bool) {
	var e struct {
		ID        string `json:"id"`
		CreatedAt int64  `json:"createdAt"`
	}
	_ = json.Unmarshal(canon, &e)
	ru.newest = max(ru.newest, e.CreatedAt)
	h := fnv.New64a()
	h.Write(canon)
	sum := h.Sum64()
	first, seen := ru.sums[e.ID]
	switch {
	case !seen:
		ru.sums[e.ID] = sum
	case first != sum:
		ru.clashes++
		if say && ru.clashes <= maxClashLines {
			fmt.Fprintf(ru.log, "record: %s feed, event %d: id %s was shown before with other content (EVENT-ID-UNIQUE): no world holds both, this one will be dropped and the recording will say so\n", w.Plan, i+1, quoteID(e.ID))
		}
	}
}

// maxClashLines bounds the lines that tell a clash as it comes.
const maxClashLines = 5

// idOf is " (id X)" for an event whose id can be read, for messages.
func idOf(raw []byte) string {
	var e struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &e) != nil || e.ID == "" {
		return ""
	}
	return " (id " + quoteID(e.ID) + ")"
}

// quoteID quotes an id a server chose, cut to 40 bytes: a message is not
// the place for a megabyte of it.
func quoteID(id string) string {
	if len(id) > 40 {
		return strconv.Quote(id[:40]) + "…"
	}
	return strconv.Quote(id)
}

// judgeDate takes the last answer's Date as the recording's time, if it
// is plausible: no later than a day past both this machine's clock and the
// newest event shown. A server's clock may be off, or virtual (a
// simulator's), but a Date of 9999 with events of 2026 would start the
// served world where it cannot move.
func (ru *run) judgeDate() {
	d := ru.date
	ru.date = time.Time{}
	if d.IsZero() {
		return
	}
	ms := d.UnixMilli()
	limit := max(ru.clock.Now().UnixMilli(), ru.newest) + (24 * time.Hour).Milliseconds()
	if ms > limit || !world.TimeInRange(ms) {
		if !ru.wrongDate {
			ru.wrongDate = true
			fmt.Fprintf(ru.log, "record: the server's Date (%s) is more than a day past this machine's clock and the newest event it showed: not taken as the recording's time\n", d.UTC().Format(time.RFC3339))
		}
		return
	}
	ru.p.Now = max(ru.p.Now, ms)
}

// noteVideo notes the video an event names: the videos to ask for are
// those the feeds named, in the order first seen (the Pro feed first,
// newest first).
func (ru *run) noteVideo(raw string) {
	var e struct {
		Video *struct {
			ID string `json:"platformVideoId"`
		} `json:"video"`
	}
	if json.Unmarshal([]byte(raw), &e) == nil && e.Video != nil && e.Video.ID != "" && !ru.seenIDs[e.Video.ID] {
		ru.seenIDs[e.Video.ID] = true
		ru.ids = append(ru.ids, e.Video.ID)
	}
}
