// Package planted is a small feed client with one bug planted on demand,
// for the proof that clienttest.Fuzz and the seed loop find each: without
// a bug it syncs the feed the way the contract asks (paced, Retry-After
// honoured, backing off after errors, every event kept once, a walk that
// meets a cursor twice stopped).
package planted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// Bug is the bug planted.
type Bug string

// The bugs.
const (
	None          Bug = ""
	PanicOnNull   Bug = "panic-on-null"   // dereferences likeCount of a video_published event: null panics
	CountTwiceTie Bug = "count-twice-tie" // a later sync counts again the events that tie with the newest it had
	LoopOnCycle   Bug = "loop-on-cycle"   // follows a cursor cycle (until MaxPages)
	TightRetry    Bug = "tight-retry"     // asks again at once after a 5xx or a broken answer
	DropUnknown   Bug = "drop-unknown"    // drops events of a type it does not know
)

// Bugs lists the planted bugs.
var Bugs = []Bug{PanicOnNull, CountTwiceTie, LoopOnCycle, TightRetry, DropUnknown}

// Clock is how the client reads the time and waits (a clienttest.Sim).
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// MaxPages bounds one walk, MaxAttempts one request's attempts.
const (
	MaxPages    = 1000
	MaxAttempts = 100
)

// Client syncs one account's feed.
type Client struct {
	URL, Key string
	Clock    Clock
	Bug      Bug
	Limit    int // page size (0: 50)

	http  http.Client
	sent  []time.Time
	seen  map[string]bool
	count int
	// newest is the createdAt and id of the newest event held.
	newest   int64
	newestID string
}

// New makes a client.
func New(url, key string, clock Clock, bug Bug) *Client {
	return &Client{URL: url, Key: key, Clock: clock, Bug: bug, http: http.Client{Timeout: 30 * time.Second}, seen: map[string]bool{}}
}

// Count is how many events the client believes it holds.
func (c *Client) Count() int { return c.count }

// IDs are the ids it holds.
func (c *Client) IDs() []string {
	out := make([]string, 0, len(c.seen))
	for id := range c.seen {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

type event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedAt int64  `json:"createdAt"`
	Video     *struct {
		LikeCount *int64 `json:"likeCount"`
	} `json:"video"`
}

type page struct {
	Events     []event `json:"events"`
	NextCursor *string `json:"nextCursor"`
}

// Sync reads what is new: the whole feed the first time, then down to
// the newest event it holds.
func (c *Client) Sync(ctx context.Context) error {
	first := c.newestID == ""
	oldNewest, oldID := c.newest, c.newestID
	followed := map[string]bool{}
	cursor := ""
	for pages := 0; pages < MaxPages; pages++ {
		var p page
		if err := c.get(ctx, cursor, &p); err != nil {
			return err
		}
		done := false
		for _, e := range p.Events {
			if e.Type == schemas.TypeVideoPublished && e.Video != nil && c.Bug == PanicOnNull {
				_ = *e.Video.LikeCount // the bug: null is a count too
			}
			if c.Bug == DropUnknown && !slices.Contains(schemas.EventTypes, e.Type) {
				continue
			}
			if !first && c.Bug == CountTwiceTie {
				// The bug: >= and only the newest's id excluded, so the
				// events that share its createdAt are counted again.
				if e.CreatedAt < oldNewest || e.ID == oldID {
					done = true
					continue
				}
				c.keep(e, true)
				continue
			}
			if c.seen[e.ID] {
				done = !first
				continue
			}
			c.keep(e, false)
		}
		if p.NextCursor == nil || done {
			return nil
		}
		if followed[*p.NextCursor] && c.Bug != LoopOnCycle {
			return fmt.Errorf("the feed handed out cursor %.12s… twice in one walk: a cycle", *p.NextCursor)
		}
		followed[*p.NextCursor] = true
		cursor = *p.NextCursor
	}
	return fmt.Errorf("more than %d pages in one walk", MaxPages)
}

func (c *Client) keep(e event, counted bool) {
	if !c.seen[e.ID] || counted {
		c.count++
	}
	c.seen[e.ID] = true
	if e.CreatedAt > c.newest || c.newestID == "" {
		c.newest, c.newestID = e.CreatedAt, e.ID
	}
}

// errRetry is an answer worth asking again for, after a wait.
type errRetry struct {
	err  error
	wait time.Duration
}

func (e *errRetry) Error() string { return e.err.Error() }

func (c *Client) get(ctx context.Context, cursor string, out *page) error {
	limit := c.Limit
	if limit == 0 {
		limit = schemas.DefaultPageSize
	}
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	target := c.URL + schemas.PathFeed + "?" + q.Encode()
	backoff := time.Second
	for attempt := 1; ; attempt++ {
		err := c.once(ctx, target, out)
		var r *errRetry
		if !errors.As(err, &r) || attempt >= MaxAttempts {
			return err
		}
		wait := r.wait
		if wait < 0 { // an error: back off, unless that is the bug
			wait, backoff = backoff, min(2*backoff, 30*time.Second)
			if c.Bug == TightRetry {
				wait = 0
			}
		}
		if err := c.Clock.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func (c *Client) once(ctx context.Context, target string, out *page) error {
	if err := c.pace(ctx); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	// net/http sends a request again by itself when a reused connection
	// closed without an answer: such a request counts for the pace too.
	var writes atomic.Int32
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { writes.Add(1) }}))
	resp, err := c.http.Do(req)
	for n := writes.Load(); n > 1; n-- {
		c.sent = append(c.sent, c.Clock.Now())
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &errRetry{err: err, wait: -1}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		secs, perr := strconv.Atoi(resp.Header.Get("Retry-After"))
		if perr != nil || secs < 0 {
			secs = 1
		}
		return &errRetry{err: errors.New("429"), wait: time.Duration(secs) * time.Second}
	case resp.StatusCode >= 500:
		return &errRetry{err: fmt.Errorf("%s", resp.Status), wait: -1}
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("feed: %s", resp.Status)
	case err != nil:
		return &errRetry{err: err, wait: -1}
	}
	*out = page{}
	if err := json.Unmarshal(data, out); err != nil {
		return &errRetry{err: fmt.Errorf("feed: the answer is not a page: %w", err), wait: -1}
	}
	return nil
}

// perMinute is the pace: one less than the contract's 20, a margin for
// the request net/http may send again by itself, which the pace counts
// only once it was sent.
const perMinute = schemas.FeedRequestsPerMinute - 1

// pace keeps to perMinute requests in any minute and a second.
func (c *Client) pace(ctx context.Context) error {
	const window = time.Minute + time.Second
	now := c.Clock.Now()
	if n := len(c.sent); n >= perMinute {
		if d := c.sent[n-perMinute].Add(window).Sub(now); d > 0 {
			if err := c.Clock.Sleep(ctx, d); err != nil {
				return err
			}
			now = c.Clock.Now()
		}
		c.sent = c.sent[n-perMinute+1:]
	}
	c.sent = append(c.sent, now)
	return nil
}
