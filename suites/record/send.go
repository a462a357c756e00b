package record

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator/world"
	"github.com/tcmkit/tcmkit/suites/client"
)

// send sends one request paced to Rate a minute per key, honouring every
// Retry-After; it returns the 200 body, or nil with a nil error when a
// bound stopped the recording.
func (ru *run) send(ctx context.Context, req client.Request, key, what string) ([]byte, error) {
	p, r := ru.p, ru.r
	maxReq := ru.bound(r.MaxRequests, DefaultMaxRequests)
	maxWait := cmp.Or(r.MaxWait, DefaultMaxWait)
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
			ru.date = t // taken once the answer is kept, if plausible (judgeDate)
		}
		if r.AfterRequest != nil {
			r.AfterRequest(p.Requests)
		}
		switch {
		case resp.Status == http.StatusOK:
			return ru.keep(resp, what)
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
			if ok, err := ru.serverWait(ctx, what, wait, fmt.Sprintf("429 with Retry-After %q", v)); !ok || err != nil {
				return nil, err
			}
		case resp.Status >= 500 && failures < 3:
			failures++
			wait := time.Duration(1<<failures) * time.Second
			if ok, err := ru.serverWait(ctx, what, wait, fmt.Sprintf("%d, to be tried again", resp.Status)); !ok || err != nil {
				return nil, err
			}
		default:
			hint := map[int]string{
				http.StatusUnauthorized: " (is the key current? a regenerated key revokes the old one)",
				http.StatusForbidden:    " (is --pro-key the key of a Pro account?)",
			}[resp.Status]
			return nil, fmt.Errorf("%s: %s answered %d%s: %s", what, req, resp.Status, hint, resp.Excerpt())
		}
	}
}

// serverWait waits what the server asked (a Retry-After, a backoff after a
// 5xx), within what its waits may add up to: past that, the recording ends
// there, cut and saying so (false).
func (ru *run) serverWait(ctx context.Context, what string, wait time.Duration, why string) (bool, error) {
	maxTotal := cmp.Or(ru.r.MaxTotalWait, DefaultMaxTotalWait)
	if ru.asked+wait > maxTotal {
		ru.p.Bounded = "--max-total-wait"
		fmt.Fprintf(ru.log, "record: %s: %s; the server's waits would add up to %s, more than --max-total-wait %s: the recording ends here, cut (it says so)\n",
			what, why, client.Seconds(ru.asked+wait), maxTotal)
		return false, nil
	}
	fmt.Fprintf(ru.log, "record: %s: %s, waiting %s\n", what, why, client.Seconds(wait))
	ru.asked += wait
	return true, ru.sleep(ctx, wait)
}

// keep returns a 200's body as the recording keeps it, redacted; nil with
// a nil error when --max-bytes stops the recording.
func (ru *run) keep(resp *client.Response, what string) ([]byte, error) {
	p := ru.p
	maxBytes := ru.r.MaxBytes
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
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
	// The next page's cursor is asked for as the server sent it,
	// within this run (resumable says why not after).
	red := ru.red.String(string(body))
	ru.rawCursor = ""
	if red != string(body) {
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		if json.Unmarshal(body, &page) == nil {
			ru.rawCursor = page.NextCursor
		}
	}
	return []byte(red), nil
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
	rate := ru.r.Rate
	if rate <= 0 {
		rate = schemas.FeedRequestsPerMinute
	}
	// Each key's requests known to remain: a page of each walk not done,
	// and the tracked videos (Pro). Beyond what its window still allows
	// now, a key's requests go at rate a minute, one key after the other.
	videos := (len(ru.ids) - p.Asked + idsPerRequest - 1) / idsPerRequest
	left, eta := 0, time.Duration(0)
	for _, w := range p.Walks {
		key, n := ru.r.ProKey, videos
		if w.Plan == world.Free {
			key, n = ru.r.FreeKey, 0
		}
		if !w.Done {
			n++
		}
		left += n
		allowed := rate - len(ru.recent(key, ru.clock.Now()))
		eta += time.Duration(max(n-allowed, 0)) * schemas.RateWindow / time.Duration(rate)
	}
	fmt.Fprintf(ru.log, "record: %s done: %d requests, %d events, %d of %d videos asked; at least %d requests left, about %s\n",
		what, p.Requests, ru.events(), p.Asked, len(ru.ids), left, client.Seconds(eta.Round(time.Second)))
}
