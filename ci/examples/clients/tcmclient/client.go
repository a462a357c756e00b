// Package tcmclient is a small client of the Tracked-Channel Monitoring
// API, written the way the kit recommends; the polite example client
// (../polite) is built on it, and the simulator's client judge passes it
// on every client requirement and every scenario (ci/examples/clients_test.go).
//
// What makes it polite:
//   - the key goes in one header, Authorization: Bearer <key>, and nowhere
//     else (never in a URL, a body or a log line);
//   - it paces itself: at most PerMinute requests in any minute and a
//     second (the contract's 20, counted on its own clock);
//   - after a 429 it waits what Retry-After says before it asks again;
//     after a 5xx, a dropped connection or a body that is not JSON it
//     backs off (1 s, 2 s, 4 s, ...) and asks for the same thing again, at
//     most Retries times; a 400, 401 or 403 is returned at once (asking
//     again would not help, and a revoked key must be replaced by a
//     person);
//   - it passes only the nextCursor it was given, and walks until
//     nextCursor is null, or, once it has everything, down to the first
//     event it already has (Feed.Sync);
//   - it sends at most 20 video ids of 1 to 32 characters a request, as a
//     JSON object with Content-Type: application/json;
//   - it waits through its Clock, so that a test can move a simulator's
//     clock instead of sleeping.
package tcmclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The contract's numbers.
const (
	PerMinute   = 20  // feed requests per minute per key
	MaxPage     = 200 // the largest page
	MaxVideoIDs = 20  // ids per tracked-videos request
	MaxIDLength = 32  // characters of one id
)

// Clock is how the client reads the time and waits.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }

func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Client calls the API with one key.
type Client struct {
	BaseURL   string
	Key       string
	HTTP      *http.Client
	Clock     Clock
	PerMinute int                           // requests it allows itself per minute (0: PerMinute)
	Retries   int                           // further attempts after a 429, a 5xx or a broken answer (0: 6)
	Logf      func(format string, a ...any) // where retries are told (nil: nowhere)

	sent     []time.Time // when the last requests were sent, for pacing
	Requests int         // requests sent
}

// New makes a client with a 30-second timeout per request and the wall
// clock.
func New(baseURL, key string) *Client {
	// A new connection for each request: on a reused connection that
	// closes without an answer, net/http sends a GET again by itself, a
	// request the pacing never saw (the 21st of a minute).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Key: key, HTTP: &http.Client{Timeout: 30 * time.Second, Transport: tr}, Clock: RealClock{}}
}

// APIError is an answer that was not a success.
type APIError struct {
	Method, Path string
	Status       int
	Code         string // the ErrorBody's error
	Message      string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
	if e.Status == http.StatusUnauthorized {
		s += " (the API key is missing, malformed or revoked: generate a new one in the application's Settings)"
	}
	return s
}

// Unauthorized reports whether err is a 401: the key must be replaced.
func Unauthorized(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == http.StatusUnauthorized
}

// Event is what this client keeps of an event; the rest of it is in Raw.
type Event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedAt int64  `json:"createdAt"`
	Video     *struct {
		PlatformVideoID string `json:"platformVideoId"`
	} `json:"video"`
}

// Page is a page of the feed.
type Page struct {
	Events     []Event `json:"events"`
	NextCursor *string `json:"nextCursor"`
}

// Videos is the answer of the tracked-videos operation, merged over the
// requests it took.
type Videos struct {
	Videos          []json.RawMessage `json:"videos"`
	MissingVideoIDs []string          `json:"missingVideoIds"`
}

// Health checks the API with the usage the spec shows: {} and no key.
func (c *Client) Health(ctx context.Context) error {
	var out struct {
		Status string `json:"status"`
	}
	if err := c.do(ctx, http.MethodPost, "/api/public/health", nil, struct{}{}, &out, false); err != nil {
		return err
	}
	if out.Status != "ok" {
		return fmt.Errorf("health: status %q", out.Status)
	}
	return nil
}

// Page reads one page of the feed: the first for cursor "", else the page
// after the one that gave cursor.
func (c *Client) Page(ctx context.Context, cursor string, limit int) (Page, error) {
	q := url.Values{"limit": {strconv.Itoa(min(max(limit, 1), MaxPage))}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var p Page
	err := c.do(ctx, http.MethodGet, "/api/public-feed", q, nil, &p, true)
	return p, err
}

// Videos asks for the tracked videos of ids, 20 at a time. An id that is
// not 1 to 32 characters is refused before anything is sent.
func (c *Client) Videos(ctx context.Context, ids []string) (Videos, error) {
	out := Videos{Videos: []json.RawMessage{}, MissingVideoIDs: []string{}}
	for _, id := range ids {
		if n := utf8.RuneCountInString(id); n < 1 || n > MaxIDLength {
			return out, fmt.Errorf("video id of %d characters: the API takes 1 to %d", n, MaxIDLength)
		}
	}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), MaxVideoIDs)]
		ids = ids[len(chunk):]
		var v Videos
		if err := c.do(ctx, http.MethodPost, "/api/public/videos", nil, map[string][]string{"videoIds": chunk}, &v, true); err != nil {
			return out, err
		}
		out.Videos = append(out.Videos, v.Videos...)
		out.MissingVideoIDs = append(out.MissingVideoIDs, v.MissingVideoIDs...)
	}
	return out, nil
}

// maxAnswer bounds what the client reads of one answer.
const maxAnswer = 16 << 20

// do sends one request, paced, and retries it as the package doc says;
// it decodes a 200's body into out.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body, out any, keyed bool) error {
	target := c.BaseURL + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	retries := c.Retries
	if retries == 0 {
		retries = 6
	}
	for attempt := 0; ; attempt++ {
		if err := c.pace(ctx); err != nil {
			return err
		}
		again, wait, err := c.once(ctx, method, target, path, raw, out, keyed, attempt)
		if !again || attempt >= retries {
			return err
		}
		if c.Logf != nil {
			c.Logf("%s %s: %v; asking again in %s", method, path, err, wait)
		}
		if err := c.Clock.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// once sends the request once. It returns whether to ask again and how
// long to wait first (Retry-After: 0 is "at once", not "never"); again is
// false when the answer is final (a success, or an error that asking again
// would not mend).
func (c *Client) once(ctx context.Context, method, target, path string, raw []byte, out any, keyed bool, attempt int) (again bool, wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(raw))
	if err != nil {
		return false, 0, err
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if keyed {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	c.Requests++
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, 0, ctx.Err()
		}
		return true, backoff(attempt), fmt.Errorf("%s %s: %w", method, path, errors.Unwrap(err))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		if err == nil && json.Unmarshal(data, out) == nil {
			return false, 0, nil
		}
		return true, backoff(attempt), fmt.Errorf("%s %s: the answer is not the JSON expected", method, path)
	case resp.StatusCode == http.StatusTooManyRequests:
		return true, retryAfter(resp.Header.Get("Retry-After"), c.Clock.Now()), apiError(method, path, resp.StatusCode, data)
	case resp.StatusCode >= 500:
		return true, backoff(attempt), apiError(method, path, resp.StatusCode, data)
	}
	return false, 0, apiError(method, path, resp.StatusCode, data)
}

func apiError(method, path string, status int, body []byte) error {
	e := &APIError{Method: method, Path: path, Status: status}
	var eb struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &eb) == nil {
		e.Code, e.Message = eb.Error, eb.Message
	}
	return e
}

// backoff is the pause before attempt+1: 1 s, 2 s, 4 s, ... at most 30 s.
func backoff(attempt int) time.Duration {
	return min(time.Second<<min(attempt, 5), 30*time.Second)
}

// retryAfter reads delta-seconds or an HTTP-date (against now, the
// client's clock); a missing or unreadable one means a second.
func retryAfter(v string, now time.Time) time.Duration {
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return time.Second
}

// pace waits until one more request keeps the client within PerMinute
// requests in any minute and a second (the second: a margin for the
// clocks' difference).
func (c *Client) pace(ctx context.Context) error {
	limit := c.PerMinute
	if limit <= 0 {
		limit = PerMinute
	}
	const window = time.Minute + time.Second
	now := c.Clock.Now()
	if len(c.sent) >= limit {
		if d := c.sent[len(c.sent)-limit].Add(window).Sub(now); d > 0 {
			if err := c.Clock.Sleep(ctx, d); err != nil {
				return err
			}
			now = c.Clock.Now()
		}
	}
	c.sent = append(c.sent, now)
	if len(c.sent) > limit {
		c.sent = append(c.sent[:0], c.sent[len(c.sent)-limit:]...)
	}
	return nil
}
