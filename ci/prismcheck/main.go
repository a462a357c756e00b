// Command prismcheck puts Prism's validating proxy (prism proxy --errors),
// loaded with schemas/openapi.yaml, in front of the simulator and shows
// that it judges what the simulator serves as our validator does:
//
//   - on the faultless simulator, no answer is flagged: feed walks, tracked
//     videos, the health check and every error status (400, 401, 403, 429
//     and 500);
//   - each named fault (simulator --list-faults) runs the same requests
//     against a simulator of its own. Which faults break a schema rule is
//     not a list kept by hand: an answer breaks one when package schemas
//     rejects the body the simulator sent. Prism must flag every such answer
//     (so it flags every fault that breaks a schema rule), and must not flag
//     a body that package schemas accepts;
//   - for every answer, the document's schemas compiled in Go
//     (package schemas/openapi) and package schemas agree.
//
// Between Prism and the simulators sits a small recording proxy, so that
// the body each simulator sent is judged as sent, and requests of several
// runs can share one Prism process (a header names the run).
//
// The faultless run's feed pages and tracked-videos answers are written to
// --capture, for the code-generator checks of ci/openapi-tools.sh.
//
//	go run ./ci/prismcheck --prism ci/node_modules/.bin/prism --capture DIR
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/openapi"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.prism, "prism", "ci/node_modules/.bin/prism", "the Prism CLI")
	flag.StringVar(&cfg.doc, "doc", "schemas/openapi.yaml", "the OpenAPI document Prism loads")
	flag.StringVar(&cfg.simulator, "simulator", "", "the simulator binary (default: go build ./cmd/simulator into a temporary directory)")
	flag.StringVar(&cfg.capture, "capture", "", "directory to write the faultless run's feed pages and tracked-videos answers to")
	flag.StringVar(&cfg.only, "faults", "", "comma-separated faults to run (default: every fault of --list-faults)")
	flag.IntVar(&cfg.parallel, "parallel", 2, "runs at once (each has its own simulator; all share one Prism)")
	flag.DurationVar(&cfg.timeout, "timeout", 15*time.Minute, "give up after this long")
	flag.BoolVar(&cfg.verbose, "v", false, "print every answer of every run")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "prismcheck:", err)
		os.Exit(1)
	}
}

type config struct {
	prism, doc, simulator, capture, only string
	parallel                             int
	timeout                              time.Duration
	verbose                              bool
}

// Headers that carry a request's run and number through Prism to the
// recording proxy.
const (
	headerRun = "X-Tcmkit-Run"
	headerSeq = "X-Tcmkit-Seq"
)

func run(ctx context.Context, cfg config, out io.Writer) error {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "prismcheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	if cfg.simulator == "" {
		cfg.simulator = filepath.Join(tmp, "simulator")
		build := exec.CommandContext(ctx, "go", "build", "-o", cfg.simulator, "./cmd/simulator")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/simulator: %w", err)
		}
	}
	faults, err := listFaults(ctx, cfg.simulator)
	if err != nil {
		return err
	}
	if cfg.only != "" {
		want := strings.Split(cfg.only, ",")
		for _, f := range want {
			if !slices.Contains(faults, f) {
				return fmt.Errorf("--faults: %q is not a fault of %s --list-faults", f, cfg.simulator)
			}
		}
		faults = want
	}

	comps, err := openapi.Build(schemas.FS())
	if err != nil {
		return err
	}
	doc, err := openapi.Compile(comps)
	if err != nil {
		return err
	}
	j := judge{doc: doc, names: map[schemas.Resource]string{}}
	for _, c := range comps {
		if c.EventType == "" {
			j.names[c.Resource] = c.Name
		}
	}

	rec := newRecorder()
	recURL, stopRec, err := rec.serve()
	if err != nil {
		return err
	}
	defer stopRec()
	prismURL, stopPrism, err := startPrism(ctx, cfg.prism, cfg.doc, recURL, filepath.Join(tmp, "prism.log"))
	if err != nil {
		return err
	}
	defer stopPrism()
	version := toolVersion(ctx, cfg.prism)
	fmt.Fprintf(out, "Prism %s proxy --errors %s in front of the simulator; %d named faults\n", version, cfg.doc, len(faults))

	// The faultless run first: its answers are the captures, and a flag
	// there means the document or the simulator is wrong.
	runs := []*runResult{{name: ""}}
	for _, f := range faults {
		runs = append(runs, &runResult{name: f})
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, cfg.parallel))
	for i, r := range runs {
		if i == 0 {
			r.err = exercise(ctx, cfg.simulator, prismURL, rec, r, tmp)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r.err = exercise(ctx, cfg.simulator, prismURL, rec, r, tmp)
		}()
	}
	wg.Wait()

	var failures []string
	for _, r := range runs {
		failures = append(failures, j.evaluate(r)...)
	}
	if cfg.capture != "" {
		if err := capture(cfg.capture, runs[0]); err != nil {
			failures = append(failures, "capture: "+err.Error())
		}
	}
	report(out, runs, cfg.verbose)
	for _, f := range failures {
		fmt.Fprintln(out, "FAIL:", f)
	}
	fmt.Fprintf(out, "prismcheck: %s in %.0f s\n", summary(runs), time.Since(start).Seconds())
	if len(failures) > 0 {
		return fmt.Errorf("%d failure(s)", len(failures))
	}
	return nil
}

// listFaults reads the FAULT column of simulator --list-faults.
func listFaults(ctx context.Context, sim string) ([]string, error) {
	raw, err := exec.CommandContext(ctx, sim, "--list-faults").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list-faults: %w", sim, err)
	}
	faults := parseFaults(string(raw))
	if len(faults) == 0 {
		return nil, fmt.Errorf("%s --list-faults listed no fault:\n%s", sim, raw)
	}
	return faults, nil
}

// parseFaults reads the first column of the table under its FAULT header.
func parseFaults(table string) []string {
	var faults []string
	header := false
	for _, line := range strings.Split(table, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !header {
			header = fields[0] == "FAULT"
			continue
		}
		faults = append(faults, fields[0])
	}
	return faults
}

func toolVersion(ctx context.Context, bin string) string {
	raw, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "(version unknown)"
	}
	return strings.TrimSpace(string(raw))
}

// startPrism starts prism proxy --errors on a free port of 127.0.0.1 and
// waits until it listens.
func startPrism(ctx context.Context, prism, doc, upstream, logPath string) (string, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(prism, "proxy", "--errors", "-h", "127.0.0.1", "-p", fmt.Sprint(port), doc, upstream)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return "", nil, fmt.Errorf("start %s: %w", prism, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Kill()
		<-exited
		logFile.Close()
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-exited:
			logFile.Close()
			log, _ := os.ReadFile(logPath)
			return "", nil, fmt.Errorf("prism exited before listening:\n%s", log)
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return url, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			log, _ := os.ReadFile(logPath)
			return "", nil, fmt.Errorf("prism does not listen after 90 s:\n%s", log)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

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

// upstreamAnswer is what a simulator sent, as the recording proxy saw it.
type upstreamAnswer struct {
	Status      int
	ContentType string
	Body        []byte
}

// recorder is the reverse proxy between Prism and the simulators: it
// forwards each request to its run's simulator and keeps the answer.
type recorder struct {
	mu      sync.Mutex
	targets map[string]string                    // run -> simulator URL
	answers map[string]map[string]upstreamAnswer // run -> seq -> answer
	client  *http.Client
}

func newRecorder() *recorder {
	return &recorder{
		targets: map[string]string{},
		answers: map[string]map[string]upstreamAnswer{},
		client:  &http.Client{Timeout: 60 * time.Second},
	}
}

func (rec *recorder) serve() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return "http://" + l.Addr().String(), func() { srv.Close() }, nil
}

func (rec *recorder) register(run, target string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.targets[run] = target
	rec.answers[run] = map[string]upstreamAnswer{}
}

func (rec *recorder) answer(run, seq string) (upstreamAnswer, bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	a, ok := rec.answers[run][seq]
	return a, ok
}

// hopHeaders are not forwarded by a proxy (RFC 9110, section 7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Te", "Trailer", "Upgrade", "Content-Length"}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	run, seq := r.Header.Get(headerRun), r.Header.Get(headerSeq)
	rec.mu.Lock()
	target, ok := rec.targets[run]
	rec.mu.Unlock()
	if !ok {
		http.Error(w, "prismcheck: unknown run "+run, http.StatusBadGateway)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range r.Header {
		if !slices.Contains(hopHeaders, http.CanonicalHeaderKey(k)) && k != headerRun && k != headerSeq {
			req.Header[k] = v
		}
	}
	resp, err := rec.client.Do(req)
	if err != nil {
		http.Error(w, "prismcheck: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		http.Error(w, "prismcheck: "+err.Error(), http.StatusBadGateway)
		return
	}
	rec.mu.Lock()
	rec.answers[run][seq] = upstreamAnswer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: got}
	rec.mu.Unlock()
	for k, v := range resp.Header {
		if !slices.Contains(hopHeaders, http.CanonicalHeaderKey(k)) {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(got)
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

// violation is one entry of Prism's list.
type violation struct {
	Location []string `json:"location"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}

// inBody reports whether the violation is about the response body.
func (v violation) inBody() bool {
	return len(v.Location) >= 2 && v.Location[0] == "response" && v.Location[1] == "body"
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

// prismVerdict reads Prism's verdict on an answer: with --errors, an
// answer with violations becomes a problem document whose type ends in
// #VIOLATIONS and whose validation lists them (the sl-violations header
// repeats them, cut when long).
func prismVerdict(h http.Header, body []byte) (bool, []violation) {
	var problem struct {
		Type       string      `json:"type"`
		Validation []violation `json:"validation"`
	}
	if strings.HasPrefix(h.Get("Content-Type"), "application/problem+json") && json.Unmarshal(body, &problem) == nil &&
		strings.HasSuffix(problem.Type, "#VIOLATIONS") {
		return true, problem.Validation
	}
	if v := h.Get("sl-violations"); v != "" {
		return true, []violation{{Message: jsondoc.Excerpt(v, 200)}}
	}
	return false, nil
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

// judge holds the document's compiled components.
type judge struct {
	doc   *openapi.Validator
	names map[schemas.Resource]string // resource -> component
}

// resourceOf is the schema an answer's body must validate against.
func resourceOf(operation string, status int) schemas.Resource {
	switch {
	case status >= 400:
		return schemas.ErrorBody
	case status != http.StatusOK:
		return ""
	case operation == "feed":
		return schemas.FeedPage
	case operation == "videos":
		return schemas.VideosResponse
	case operation == "health":
		return schemas.HealthBody
	}
	return ""
}

// evaluate judges every answer of a run and returns what is wrong.
func (j judge) evaluate(r *runResult) []string {
	who := "faultless run"
	if r.name != "" {
		who = "fault " + r.name
	}
	if r.err != nil {
		return []string{fmt.Sprintf("%s: %v", who, r.err)}
	}
	var fails []string
	fail := func(ex *exchange, format string, args ...any) {
		fails = append(fails, fmt.Sprintf("%s: %s %s (%s): %s", who, ex.Method, ex.Target, ex.Label, fmt.Sprintf(format, args...)))
	}
	for _, ex := range r.exchanges {
		if ex.Upstream == nil {
			// Prism answered by itself: the request was refused (our
			// requests are valid), or Prism could not be reached.
			if r.name == "" {
				fail(ex, "Prism answered %d by itself: %s", ex.Status, describe(ex.Violations))
			}
			continue
		}
		ex.Resource = resourceOf(ex.Operation, ex.Upstream.Status)
		if ex.Resource != "" {
			ex.ValidatorErr = schemas.ValidateJSON(ex.Resource, ex.Upstream.Body)
			if doc, err := jsondoc.Decode(ex.Upstream.Body); err != nil {
				ex.DocumentErr = err
			} else {
				ex.DocumentErr = j.doc.Validate(j.names[ex.Resource], doc)
			}
			if (ex.ValidatorErr == nil) != (ex.DocumentErr == nil) {
				fail(ex, "the validator and the document disagree on the %d body: validator %v; document %v", ex.Upstream.Status, ex.ValidatorErr, ex.DocumentErr)
			}
		}
		bodyFlag := slices.ContainsFunc(ex.Violations, violation.inBody)
		switch {
		case r.name == "" && ex.Flagged:
			fail(ex, "Prism flags the faultless simulator's %d answer: %s", ex.Upstream.Status, describe(ex.Violations))
		case r.name == "" && ex.ValidatorErr != nil:
			fail(ex, "the faultless simulator's %d body breaks the schema: %v", ex.Upstream.Status, ex.ValidatorErr)
		case ex.ValidatorErr != nil && !bodyFlag:
			fail(ex, "Prism does not flag a %d body that breaks the schema: %v", ex.Upstream.Status, firstLine(ex.ValidatorErr))
		case ex.ValidatorErr == nil && bodyFlag && isJSON(ex.Upstream.ContentType):
			// (Sent as another media type, the body is text to Prism, and
			// "must be object" follows from the media type.)
			fail(ex, "Prism flags a %d body that the validator accepts: %s", ex.Upstream.Status, describe(ex.Violations))
		}
	}
	if r.name == "" {
		fails = append(fails, j.coverage(r)...)
	}
	return fails
}

// coverage checks that the faultless run reached what it must show clean:
// each error status, and feed pages holding every event type.
func (j judge) coverage(r *runResult) []string {
	statuses := map[int]bool{}
	types := map[string]bool{}
	for _, ex := range r.exchanges {
		if ex.Upstream == nil {
			continue
		}
		statuses[ex.Upstream.Status] = true
		if ex.Upstream.Status == http.StatusOK && ex.Operation != "health" {
			doc, _ := jsondoc.Decode(ex.Upstream.Body)
			jsondoc.Walk(doc, func(ptr string, v any) {
				if jsondoc.Last(ptr) == "type" {
					if s, ok := v.(string); ok && slices.Contains(schemas.EventTypes, s) {
						types[s] = true
					}
				}
			})
		}
	}
	var fails []string
	for _, s := range []int{200, 400, 401, 403, 429, 500} {
		if !statuses[s] {
			fails = append(fails, fmt.Sprintf("faultless run: no answer with status %d was reached", s))
		}
	}
	for _, t := range schemas.EventTypes {
		if !types[t] {
			fails = append(fails, fmt.Sprintf("faultless run: no %s event was served (a longer --history in startSimulator?)", t))
		}
	}
	return fails
}

// isJSON reports whether a Content-Type is JSON (application/json or a
// +json type).
func isJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func describe(vs []violation) string {
	if len(vs) == 0 {
		return "(no details)"
	}
	v := vs[0]
	s := v.Message
	if len(v.Location) > 0 {
		s = strings.Join(v.Location, ".") + ": " + s
	}
	if len(vs) > 1 {
		s += fmt.Sprintf(" (and %d more)", len(vs)-1)
	}
	return s
}

func describeAll(vs []violation) string {
	var parts []string
	for _, v := range vs[:min(len(vs), 3)] {
		parts = append(parts, describe([]violation{v}))
	}
	if len(vs) > 3 {
		parts = append(parts, fmt.Sprintf("and %d more", len(vs)-3))
	}
	return strings.Join(parts, "; ")
}

func firstLine(err error) string {
	s := err.Error()
	lines := strings.Split(s, "\n")
	if len(lines) > 1 {
		return strings.TrimSpace(lines[1])
	}
	return s
}

// capture writes the faultless run's 200 bodies of the feed and the
// tracked videos, one file each.
func capture(dir string, r *runResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := map[string]int{}
	for _, ex := range r.exchanges {
		if ex.Upstream == nil || ex.Upstream.Status != http.StatusOK || ex.Operation == "health" {
			continue
		}
		kind := map[string]string{"feed": "feed-page", "videos": "videos-response"}[ex.Operation]
		n[kind]++
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, ex.Upstream.Body, "", "  "); err != nil {
			return fmt.Errorf("%s %s: %w", ex.Method, ex.Target, err)
		}
		name := filepath.Join(dir, fmt.Sprintf("%s-%02d.json", kind, n[kind]))
		if err := os.WriteFile(name, pretty.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if n["feed-page"] == 0 || n["videos-response"] == 0 {
		return fmt.Errorf("captured %d feed pages and %d tracked-videos answers; want some of each", n["feed-page"], n["videos-response"])
	}
	return nil
}

// report prints one line per run.
func report(out io.Writer, runs []*runResult, verbose bool) {
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tANSWERS\tSCHEMA (package schemas)\tPRISM\tFIRST FLAG")
	for _, r := range runs {
		name := r.name
		if name == "" {
			name = "(no fault)"
		}
		if r.err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\terror: %v\n", name, r.err)
			continue
		}
		broken, flagged, bodyFlagged := 0, 0, 0
		first := ""
		for _, ex := range r.exchanges {
			if ex.ValidatorErr != nil {
				broken++
			}
			if ex.Flagged {
				flagged++
				if slices.ContainsFunc(ex.Violations, violation.inBody) {
					bodyFlagged++
				}
				if first == "" {
					first = ex.Label + ": " + describe(ex.Violations)
				}
			}
		}
		schema := "valid"
		if broken > 0 {
			schema = fmt.Sprintf("breaks it in %d", broken)
		}
		prism := "clean"
		if flagged > 0 {
			prism = fmt.Sprintf("flags %d (%d body)", flagged, bodyFlagged)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", name, len(r.exchanges), schema, prism, jsondoc.Excerpt(first, 110))
		if verbose {
			for _, ex := range r.exchanges {
				up := "-"
				if ex.Upstream != nil {
					up = fmt.Sprint(ex.Upstream.Status)
				}
				fmt.Fprintf(tw, "  %s %s\t%s\tsimulator %s, prism %d\t%v\t%s\n", ex.Method, ex.Target, ex.Label, up, ex.Status, ex.Flagged, describeAll(ex.Violations))
			}
		}
	}
	tw.Flush()
}

// summary is the closing line: what Prism did on the faultless run and on
// the faults that break a schema rule.
func summary(runs []*runResult) string {
	var clean, answers, schemaFaults, schemaFlagged, otherFlagged, others int
	for i, r := range runs {
		broken, flagged := false, false
		for _, ex := range r.exchanges {
			broken = broken || ex.ValidatorErr != nil
			flagged = flagged || ex.Flagged
		}
		switch {
		case i == 0:
			answers = len(r.exchanges)
			if !flagged && r.err == nil {
				clean = 1
			}
		case broken:
			schemaFaults++
			if flagged {
				schemaFlagged++
			}
		default:
			others++
			if flagged {
				otherFlagged++
			}
		}
	}
	state := "FLAGGED"
	if clean == 1 {
		state = "clean"
	}
	return fmt.Sprintf("faultless simulator %s (%d answers); %d of %d faults that break a schema rule flagged; %d of %d other faults flagged too (headers, content type, status)",
		state, answers, schemaFlagged, schemaFaults, otherFlagged, others)
}
