package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/redact"
)

// run is the state of one run against one target, shared by the specs of a
// process: the client, what was fetched, and the preflight's verdict. It is
// built on first use, once the entry point has filled the Config.
type run struct {
	cfg *Config
	c   *client.Client
	red *redact.Redactor
	// g fails through the redactor, whatever fail handler the host suite
	// registered: a body that echoes a key cannot leak through a message.
	g gomega.Gomega

	mu        sync.Mutex // guards walks and preflight
	walks     map[string]*walkEntry
	preflight *error
}

var runMu sync.Mutex

// state returns the run of this Config, building it on first use.
func (c *Config) state() *run {
	runMu.Lock()
	defer runMu.Unlock()
	if c.run != nil {
		return c.run
	}
	red := c.Redactor
	if red == nil {
		red = redact.New()
		c.Redactor = red
	}
	red.Add(c.Secrets()...)
	// Invented keys are no secret, but redacted too: a key-shaped string in
	// a report should not alarm a secret scanner.
	red.Add(c.unknownKey(), c.unprefixedToken())
	if c.Clock == nil && c.ControlClock {
		c.Clock = client.ControlClock{Control: simulator.Control{URL: c.Target, HTTP: c.HTTP}}
	}
	r := &run{cfg: c, red: red, walks: map[string]*walkEntry{}}
	r.c = &client.Client{
		BaseURL: c.Target,
		HTTP:    c.HTTP,
		Clock:   c.Clock,
		MaxWait: c.MaxWait,
		Redact:  red.String,
		Log:     red.Writer(c.log()),
	}
	r.g = gomega.NewGomega(func(message string, callerSkip ...int) {
		ginkgo.GinkgoHelper()
		skip := 1
		if len(callerSkip) > 0 {
			skip += callerSkip[0]
		}
		ginkgo.Fail(red.String(message), skip)
	})
	c.run = r
	return r
}

// Client is the suite's HTTP client for this Config (for the entry point's
// request count and for host suites that want to send more).
func (c *Config) Client() *client.Client { return c.state().c }

// Preflight checks, once, that the target answers and accepts the Pro key
// on the feed. Its error is one clear sentence: the run errored, the target
// was not judged.
func (c *Config) Preflight(ctx context.Context) error {
	if err := c.Validate(); err != nil {
		return err
	}
	r := c.state()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.preflight != nil {
		return *r.preflight
	}
	err := r.runPreflight(ctx)
	r.preflight = &err
	return err
}

func (r *run) runPreflight(ctx context.Context) error {
	if _, err := r.c.Cached(ctx, r.health()); err != nil {
		return fmt.Errorf("the target %s does not answer: %w", r.cfg.Target, err)
	}
	resp, err := r.c.Cached(ctx, r.feed(nil, r.cfg.ProKey))
	if err != nil {
		return fmt.Errorf("the target %s does not answer the feed: %w", r.cfg.Target, err)
	}
	if resp.Status != 200 {
		return fmt.Errorf("the Pro key (%s) is not accepted: %s answered %d, want 200; body: %s",
			redact.Form(r.cfg.ProKey), resp.Request, resp.Status, resp.Excerpt())
	}
	return nil
}

// Requests of the three operations.

func (r *run) health() client.Request {
	return client.PostJSON(schemas.PathHealth, "{}", "")
}

func (r *run) feed(q url.Values, key string) client.Request {
	return client.Get(schemas.PathFeed, q, client.Bearer(key))
}

func (r *run) feedLimit(limit string, key string) client.Request {
	return r.feed(url.Values{"limit": {limit}}, key)
}

func (r *run) videos(ids []string, key string) client.Request {
	body, _ := json.Marshal(map[string][]string{"videoIds": ids})
	return client.PostJSON(schemas.PathVideos, string(body), client.Bearer(key))
}

func (r *run) videosRaw(body, key string) client.Request {
	return client.PostJSON(schemas.PathVideos, body, client.Bearer(key))
}

// fetch returns the (possibly shared) response to req, failing the spec
// when the target does not answer at all.
func (r *run) fetch(ctx context.Context, req client.Request) *client.Response {
	ginkgo.GinkgoHelper()
	resp, err := r.c.Cached(ctx, req)
	if err != nil {
		ginkgo.Fail(r.red.String(fmt.Sprintf("%s: no answer: %v", req, err)))
	}
	return resp
}

// walk returns the cursor walk at a page size, walking on first use. The
// limit=200 walk goes to the end (bounded by MaxPages); the default-size
// walk goes just past the first page boundary of the other, which is what
// comparing the two needs. Requests made ahead of time (prefetchWalks) go
// to the spec that uses the walk first.
func (r *run) walk(ctx context.Context, limit string) *walk {
	w := r.walkOnce(ctx, limit)
	r.c.Claim(walkScope(limit))
	return w
}

func walkScope(limit string) string { return "feed walk limit=" + limit }

func (r *run) walkOnce(ctx context.Context, limit string) *walk {
	r.mu.Lock()
	e, ok := r.walks[limit]
	if !ok {
		e = &walkEntry{}
		r.walks[limit] = e
	}
	r.mu.Unlock()
	// Only a spec that needs this walk waits for it, not every spec.
	e.once.Do(func() { e.w = r.makeWalk(ctx, limit) })
	return e.w
}

// walkEntry is one lazily made walk.
type walkEntry struct {
	once sync.Once
	w    *walk
}

func (r *run) makeWalk(ctx context.Context, limit string) *walk {
	fetch := func(ctx context.Context, cursor string) (*client.Response, error) {
		q := url.Values{}
		if limit != "" {
			q.Set("limit", limit)
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		return r.c.Cached(ctx, r.feed(q, r.cfg.ProKey))
	}
	var w *walk
	if limit == "" {
		w = walkFeed(ctx, limit, fetch, 0, schemas.MaxPageSize+schemas.DefaultPageSize)
	} else {
		w = walkFeed(ctx, limit, fetch, r.cfg.MaxPages, 0)
	}
	return w
}

// prefetchWalks starts both feed walks in the background, so that the Pro
// key's requests (and its own waits for the rate limit) overlap the time
// the rate-limit specs must wait anyway. Against a 20/minute server this
// saves a whole window. The walks are the same lazily cached values every
// spec uses; only their timing changes.
func (r *run) prefetchWalks() {
	go func() {
		for _, limit := range []string{strconv.Itoa(schemas.MaxPageSize), ""} {
			r.walkOnce(client.WithScope(context.Background(), walkScope(limit)), limit)
		}
	}()
}

// fullWalk is the walk at the largest page size, which every feed-wide check uses.
func (r *run) fullWalk(ctx context.Context) *walk {
	return r.walk(ctx, strconv.Itoa(schemas.MaxPageSize))
}

// knownVideoIDs are the distinct video ids the full walk shows, in feed
// order, at most max of them.
func (r *run) knownVideoIDs(ctx context.Context, max int) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range r.fullWalk(ctx).Pages {
		doc, _ := p.Resp.JSON()
		obj, _ := doc.(map[string]any)
		evs, _ := obj["events"].([]any)
		for _, e := range evs {
			m, _ := e.(map[string]any)
			v, _ := m["video"].(map[string]any)
			id, _ := v["platformVideoId"].(string)
			if id == "" || len(id) > schemas.MaxVideoIDLen || seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, id)
			if len(out) == max {
				return out
			}
		}
	}
	return out
}

// inventedID is a video id that cannot exist: '~' is in no platform's id
// alphabet. n tells ids apart; the result has exactly length characters.
func inventedID(n, length int) string {
	s := fmt.Sprintf("~no~such~video~%d~", n)
	for len(s) < length {
		s += "x"
	}
	return s[:length]
}
