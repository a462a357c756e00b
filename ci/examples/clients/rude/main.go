// Command rude is an example client of the Tracked-Channel Monitoring API
// that breaks every client requirement, each with one request (CLIENT-RATE
// with two: the retry at once after the 429 is more than 20 in a minute
// too), and keeps every other rule while it does, so that the simulator's
// client judge has exactly one finding per requirement
// (ci/examples/clients_test.go checks that it finds exactly these). It is written with bare net/http, the careless
// way; do not copy it: ../tcmclient is the client to copy.
//
//	TCM_BASE_URL=http://127.0.0.1:8080 TCM_PRO_KEY=tcm_... rude [--advance-clock]
//
// Its waits move a manual simulator clock with --advance-clock
// (TCM_CONTROL_URL), else it sleeps (then it takes about two minutes).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/ci/examples/clients/tcmclient"
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

// rude is the client: a base URL, a key, a clock, and what it saw.
type rude struct {
	base, key string
	clock     tcmclient.Clock
	out       io.Writer
	requests  int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rude", flag.ContinueOnError)
	fs.SetOutput(stderr)
	advance := fs.Bool("advance-clock", false, "wait by moving the simulator's manual clock ($TCM_CONTROL_URL) instead of sleeping")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	r := &rude{base: strings.TrimRight(os.Getenv("TCM_BASE_URL"), "/"), key: os.Getenv("TCM_PRO_KEY"), clock: tcmclient.RealClock{}, out: stdout}
	if r.base == "" || r.key == "" {
		fmt.Fprintln(stderr, "rude: set TCM_BASE_URL and TCM_PRO_KEY")
		return 2
	}
	if *advance {
		r.clock = tcmclient.NewSimulatorClock(os.Getenv("TCM_CONTROL_URL"), os.Getenv("TCM_CONTROL_TOKEN"))
	}
	if err := r.session(ctx); err != nil {
		fmt.Fprintf(stderr, "rude: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "rude: %d requests\n", r.requests)
	return 0
}

func (r *rude) session(ctx context.Context) error {
	bearer := "Bearer " + r.key
	// CLIENT-BEARER: the key under another scheme.
	r.send(ctx, "GET", "/api/public-feed?limit=1", "", "Authorization", "Token "+r.key)
	// CLIENT-KEY-NOT-IN-URL: the key in the query string as well.
	r.send(ctx, "GET", "/api/public-feed?limit=1&api_key="+r.key, "", "Authorization", bearer)
	// CLIENT-CURSOR-ISSUED: a cursor made up.
	r.send(ctx, "GET", "/api/public-feed?limit=1&cursor=bWFkZS11cC1jdXJzb3I", "", "Authorization", bearer)
	// CLIENT-WALK-END: a walk begun (one nextCursor followed), then left.
	_, page := r.send(ctx, "GET", "/api/public-feed?limit=5", "", "Authorization", bearer)
	if cursor := nextCursor(page); cursor != "" {
		r.send(ctx, "GET", "/api/public-feed?limit=5&cursor="+cursor, "", "Authorization", bearer)
	}
	// CLIENT-VIDEO-IDS: 21 ids in one request.
	ids := make([]string, 21)
	for i := range ids {
		ids[i] = `"v` + strconv.Itoa(i) + `"`
	}
	r.send(ctx, "POST", "/api/public/videos", `{"videoIds":[`+strings.Join(ids, ",")+`]}`, "Authorization", bearer, "Content-Type", "application/json")
	// CLIENT-JSON-BODY: the right body as text/plain.
	r.send(ctx, "POST", "/api/public/videos", `{"videoIds":["v1"]}`, "Authorization", bearer, "Content-Type", "text/plain")
	// CLIENT-RATE: into the rate limit, the 21st feed request in a minute.
	r.burst(ctx, bearer)
	// CLIENT-RETRY-AFTER: and at once again after the 429.
	status, _ := r.send(ctx, "GET", "/api/public-feed?limit=1", "", "Authorization", bearer)
	if status != http.StatusTooManyRequests {
		return fmt.Errorf("the retry at once was answered %d, not 429", status)
	}
	return r.clock.Sleep(ctx, time.Minute) // and then waited out
}

// burst asks for the first page until the answer is a 429 (at most 25
// times).
func (r *rude) burst(ctx context.Context, bearer string) {
	for range 25 {
		if status, _ := r.send(ctx, "GET", "/api/public-feed?limit=1", "", "Authorization", bearer); status == http.StatusTooManyRequests {
			return
		}
	}
}

// send sends one request; it returns the status and the body (0 and nil
// when there was no answer).
func (r *rude) send(ctx context.Context, method, path, body string, header ...string) (int, []byte) {
	r.requests++
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, strings.NewReader(body))
	if err != nil {
		return 0, nil
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(r.out, "%s %s: %v\n", method, strings.SplitN(path, "?", 2)[0], err)
		return 0, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	fmt.Fprintf(r.out, "%s %s → %d\n", method, strings.SplitN(path, "?", 2)[0], resp.StatusCode)
	return resp.StatusCode, data
}

// nextCursor picks nextCursor out of a page, carelessly.
func nextCursor(page []byte) string {
	_, after, ok := strings.Cut(string(page), `"nextCursor":"`)
	if !ok {
		return ""
	}
	cursor, _, _ := strings.Cut(after, `"`)
	return cursor
}
