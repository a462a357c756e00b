package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// simInfo is what the simulator writes to --info-file.
type simInfo struct {
	URL        string `json:"url"`
	ProKey     string `json:"proKey"`
	FreeKey    string `json:"freeKey"`
	RevokedKey string `json:"revokedKey"`
}

// startSimulator runs the simulator with a manual clock and a week of
// history (every event type, a walk of a few pages), and the fault if any.
func startSimulator(ctx context.Context, sim, fault, dir string) (simInfo, func(), error) {
	infoFile := filepath.Join(dir, "info.json")
	args := []string{"--addr", "127.0.0.1:0", "--speed", "0", "--history", "168h", "--info-file", infoFile, "--log-level", "warn"}
	if fault != "" {
		args = append(args, "--fault", fault)
	}
	var logs bytes.Buffer
	cmd := exec.Command(sim, args...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return simInfo{}, nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() { cmd.Process.Kill(); <-exited }
	deadline := time.Now().Add(60 * time.Second)
	for {
		if raw, err := os.ReadFile(infoFile); err == nil {
			var info simInfo
			if json.Unmarshal(raw, &info) == nil && info.URL != "" {
				return info, stop, nil
			}
		}
		select {
		case <-exited:
			return simInfo{}, nil, fmt.Errorf("simulator %v exited: %s", args, logs.String())
		case <-ctx.Done():
			stop()
			return simInfo{}, nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return simInfo{}, nil, fmt.Errorf("simulator %v wrote no info file in 60 s", args)
		}
	}
}

// exchange is one request of a run: what Prism answered and what the
// simulator had sent it.
type exchange struct {
	Label     string // what the request is for, such as "feed walk page 2"
	Operation string // feed, videos or health
	Method    string
	Target    string // path and query
	// Prism's answer.
	Status     int
	Flagged    bool        // Prism found violations (--errors answers them as a problem)
	Violations []violation // what it found
	// The simulator's answer; nil when Prism answered by itself.
	Upstream *upstreamAnswer
	// Judged by package schemas and by the document compiled in Go.
	Resource     schemas.Resource
	ValidatorErr error
	DocumentErr  error
}

type runResult struct {
	name      string // the fault; "" for the faultless run
	exchanges []*exchange
	err       error
}

// client sends the run's requests through Prism.
type client struct {
	ctx    context.Context
	prism  string
	run    string
	seq    int
	http   *http.Client
	rec    *recorder
	result *runResult
}

// do sends one request through Prism and records both answers: Prism's,
// and the simulator's as the recording proxy saw it.
func (c *client) do(label, operation, method, target, key string, body []byte) *exchange {
	c.seq++
	seq := fmt.Sprint(c.seq)
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	ex := &exchange{Label: label, Operation: operation, Method: method, Target: target}
	c.result.exchanges = append(c.result.exchanges, ex)
	req, err := http.NewRequestWithContext(c.ctx, method, c.prism+target, r)
	if err != nil {
		ex.Violations = []violation{{Message: err.Error()}}
		return ex
	}
	req.Header.Set(headerRun, c.run)
	req.Header.Set(headerSeq, seq)
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		ex.Violations = []violation{{Message: "no answer from Prism: " + err.Error()}}
		return ex
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	ex.Status = resp.StatusCode
	ex.Flagged, ex.Violations = prismVerdict(resp.Header, got)
	if a, ok := c.rec.answer(c.run, seq); ok {
		ex.Upstream = &a
	}
	return ex
}

// upstream is the status and body the simulator sent; 0 and nil when the
// request did not reach it.
func (ex *exchange) upstream() (int, []byte) {
	if ex.Upstream == nil {
		return 0, nil
	}
	return ex.Upstream.Status, ex.Upstream.Body
}

func (r *runResult) runID() string {
	if r.name == "" {
		return "faultless"
	}
	return r.name
}

// exercise starts a simulator for the run and sends it, through Prism,
// the requests that reach every answer the contract describes.
func exercise(ctx context.Context, sim, prism string, rec *recorder, r *runResult, tmp string) error {
	dir, err := os.MkdirTemp(tmp, "run-")
	if err != nil {
		return err
	}
	info, stop, err := startSimulator(ctx, sim, r.name, dir)
	if err != nil {
		return err
	}
	defer stop()
	rec.register(r.runID(), info.URL)
	c := &client{ctx: ctx, prism: prism, run: r.runID(), http: &http.Client{Timeout: 60 * time.Second}, rec: rec, result: r}

	// Feed: default page, a small page and the next, a walk of big pages
	// to the end (bounded, for a fault whose cursor never ends), a capped
	// limit, and the 400s.
	var videoIDs []string
	collect := func(body []byte) {
		doc, err := jsondoc.Decode(body)
		if err != nil {
			return
		}
		for _, ev := range jsondoc.Items(doc, "/events") {
			// Videos with title changes first: their VideoEntries carry
			// events of a type with fields of its own.
			if id, ok := jsondoc.String(ev, "/video/platformVideoId"); ok && !slices.Contains(videoIDs, id) {
				if t, _ := jsondoc.String(ev, "/type"); t == schemas.TypeTitleChanged {
					videoIDs = slices.Insert(videoIDs, 0, id)
				} else {
					videoIDs = append(videoIDs, id)
				}
			}
		}
	}
	c.do("feed, default page", "feed", "GET", schemas.PathFeed, info.ProKey, nil)
	_, small := c.do("feed, limit=5", "feed", "GET", schemas.PathFeed+"?limit=5", info.ProKey, nil).upstream()
	if next, ok := jsondoc.String(mustDecode(small), "/nextCursor"); ok && next != "" {
		c.do("feed, limit=5, next page", "feed", "GET", schemas.PathFeed+"?limit=5&cursor="+next, info.ProKey, nil)
	}
	cursor := ""
	for page := 1; page <= 8; page++ {
		target := schemas.PathFeed + fmt.Sprintf("?limit=%d", schemas.MaxPageSize)
		if cursor != "" {
			target += "&cursor=" + cursor
		}
		status, body := c.do(fmt.Sprintf("feed walk, page %d", page), "feed", "GET", target, info.ProKey, nil).upstream()
		if status != http.StatusOK {
			break
		}
		collect(body)
		next, ok := jsondoc.String(mustDecode(body), "/nextCursor")
		if !ok || next == "" {
			break
		}
		cursor = next
	}
	c.do("feed, limit above the cap", "feed", "GET", schemas.PathFeed+"?limit=500", info.ProKey, nil)
	c.do("feed, limit=0 (400)", "feed", "GET", schemas.PathFeed+"?limit=0", info.ProKey, nil)
	c.do("feed, unknown cursor (400)", "feed", "GET", schemas.PathFeed+"?cursor=bm90LWEtY3Vyc29y", info.ProKey, nil)
	c.do("feed, revoked key (401)", "feed", "GET", schemas.PathFeed, info.RevokedKey, nil)
	c.do("feed, unknown key (401)", "feed", "GET", schemas.PathFeed, "tcm_"+strings.Repeat("Z", 32), nil)

	// Tracked videos: found and missing ids, the plan gate, a revoked key,
	// and a 500 injected through the control API.
	ids := videoIDs[:min(len(videoIDs), schemas.MaxVideoIDs-1)]
	ids = append(ids, "zzNoSuchVideo00")
	body, _ := json.Marshal(map[string]any{"videoIds": ids})
	c.do(fmt.Sprintf("videos, %d ids", len(ids)), "videos", "POST", schemas.PathVideos, info.ProKey, body)
	one, _ := json.Marshal(map[string]any{"videoIds": ids[:1]})
	c.do("videos, 1 id", "videos", "POST", schemas.PathVideos, info.ProKey, one)
	c.do("videos, free plan (403)", "videos", "POST", schemas.PathVideos, info.FreeKey, one)
	c.do("videos, revoked key (401)", "videos", "POST", schemas.PathVideos, info.RevokedKey, one)
	if err := injectFault(ctx, info.URL, `{"operation":"videos","status":500,"count":1}`); err != nil {
		return fmt.Errorf("inject a 500: %w", err)
	}
	c.do("videos, injected 500", "videos", "POST", schemas.PathVideos, info.ProKey, one)

	c.do("health", "health", "POST", schemas.PathHealth, "", []byte(`{}`))

	// The feed's rate limit: small pages until a 429 (with a margin for a
	// fault that lets more through).
	for i := 1; i <= schemas.FeedRequestsPerMinute+5; i++ {
		status, _ := c.do(fmt.Sprintf("feed, burst request %d", i), "feed", "GET", schemas.PathFeed+"?limit=1", info.ProKey, nil).upstream()
		if status == http.StatusTooManyRequests || status == 0 {
			break
		}
	}
	return nil
}

func mustDecode(body []byte) any {
	doc, _ := jsondoc.Decode(body)
	return doc
}

// injectFault turns on an injected outage through the simulator's control
// API (POST /_control/faults).
func injectFault(ctx context.Context, base, spec string) error {
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/_control/faults", strings.NewReader(spec))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("POST /_control/faults: %d %s", resp.StatusCode, body)
	}
	return nil
}
