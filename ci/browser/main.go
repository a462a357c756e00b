// Command browser proves that a web page of another origin can use the
// simulator: it starts the simulator binary with --cors for the page's
// origin, serves page.html on another port of 127.0.0.1, opens it in
// headless Chromium (Debian's package, driven through the DevTools
// protocol by chromedp; no browser is downloaded), and judges what the
// page saw: a feed page and a tracked-videos answer read with the Pro key
// (so preflights were answered), a 429 whose Retry-After the page could
// read (exposed), and a text/plain POST to the control API refused.
//
//	go run . --simulator /path/to/simulator [--chromium /usr/bin/chromium] [--screenshot out.png]
//	go run . --ui --simulator /path/to/simulator --screenshot ui.png   # the simulator's page (ui.go)
//
// It exits 1 with a line per failed check. ci/browser.sh builds and runs it.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"
)

//go:embed page.html
var page []byte

func main() {
	sim := flag.String("simulator", "", "the simulator binary")
	chromium := flag.String("chromium", "/usr/bin/chromium", "the Chromium binary")
	shot := flag.String("screenshot", "", "write a PNG of the page here")
	ui := flag.Bool("ui", false, "check the simulator's own page, GET /_control/ui (ui.go), instead")
	flag.Parse()
	run := check
	if *ui {
		run = checkUI
	}
	if err := run(*sim, *chromium, *shot); err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		os.Exit(1)
	}
}

// seen is what the page records of one call.
type seen struct {
	Status     int             `json:"status"`
	RetryAfter *string         `json:"retryAfter"`
	Body       json.RawMessage `json:"body"`
	Error      string          `json:"error"`
}

func check(simBin, chromium, shot string) error {
	if simBin == "" {
		return errors.New("--simulator is required")
	}
	work, err := os.MkdirTemp("", "tcm-browser-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	pageLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	pageOrigin := "http://" + pageLn.Addr().String()

	// The simulator: manual clock, a feed budget of 2 so that the page's
	// third feed request is a 429, CORS for the page's origin only.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	infoPath := filepath.Join(work, "info.json")
	cmd := exec.CommandContext(ctx, simBin, "--addr", "127.0.0.1:0", "--speed", "0", "--feed-limit", "2",
		"--cors", pageOrigin, "--info-file", infoPath, "--log-level", "warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var info struct {
		URL    string `json:"url"`
		ProKey string `json:"proKey"`
	}
	for i := 0; ; i++ {
		raw, err := os.ReadFile(infoPath)
		if err == nil {
			if err := json.Unmarshal(raw, &info); err != nil {
				return err
			}
			break
		}
		if i == 200 {
			return errors.New("the simulator did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	})
	mux.HandleFunc("GET /config.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(info)
	})
	go func() { _ = http.Serve(pageLn, mux) }()

	actx, acancel := chromedp.NewExecAllocator(ctx, chromiumOptions(chromium, filepath.Join(work, "profile"), chromedp.Flag("disable-quic", true))...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(bctx, chromedp.Navigate(pageOrigin+"/")); err != nil {
		return fmt.Errorf("chromium: %w", err)
	}
	raw, err := chromedp.Run(bctx, chromedp.Poll[string](`window.__result`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		return fmt.Errorf("chromium: the page did not finish: %w", err)
	}
	if shot != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			return fmt.Errorf("chromium: screenshot: %w", err)
		}
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			return err
		}
	}
	var got map[string]seen
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		return fmt.Errorf("the page's result: %w", err)
	}
	return judge(got)
}

// judge checks what the page saw, and prints each check.
func judge(got map[string]seen) error {
	failed := 0
	expect := func(ok bool, what string, v any) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			failed++
		}
		fmt.Printf("%s %s (%v)\n", mark, what, v)
	}
	var feed struct {
		Events     []json.RawMessage `json:"events"`
		NextCursor *string           `json:"nextCursor"`
	}
	_ = json.Unmarshal(got["feed"].Body, &feed)
	expect(got["feed"].Status == 200 && len(feed.Events) == 5 && feed.NextCursor != nil,
		"the page read a feed page of 5 events with a nextCursor (Authorization sent after a preflight)", got["feed"].Status)
	var videos struct {
		Videos []json.RawMessage `json:"videos"`
	}
	_ = json.Unmarshal(got["videos"].Body, &videos)
	expect(got["videos"].Status == 200 && len(videos.Videos) >= 1,
		"the page read a tracked-videos answer with the Pro key (JSON POST after a preflight)", fmt.Sprintf("status %d, %d videos", got["videos"].Status, len(videos.Videos)))
	expect(got["feed2"].Status == 200, "a second feed page", got["feed2"].Status)
	var errBody struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(got["limited"].Body, &errBody)
	lim := got["limited"]
	ra := ""
	if lim.RetryAfter != nil {
		ra = *lim.RetryAfter
	}
	secs, err := strconv.Atoi(ra)
	expect(lim.Status == 429 && errBody.Error == "rate_limited" && err == nil && secs >= 1,
		"the page saw a 429 and read its Retry-After (exposed to scripts)", fmt.Sprintf("status %d, Retry-After %q", lim.Status, ra))
	expect(got["controlTextPlain"].Status == 415,
		"a text/plain POST to the control API from the page is refused", got["controlTextPlain"].Status)
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed", failed)
	}
	return nil
}

// chromiumOptions start headless Chromium as this closed machine needs it
// (no sandbox as root, no GPU, none of the background connections that
// the network refuses), with a profile of its own and the extra options.
func chromiumOptions(chromium, profile string, extra ...chromedp.ExecAllocatorOption) []chromedp.ExecAllocatorOption {
	return append(append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
	), extra...)
}
