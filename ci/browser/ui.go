package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// checkUI proves the simulator's page (GET /_control/ui) in headless
// Chromium: the simulator runs behind a control token on the manual clock,
// a client breaks the rate limit (21 feed requests at once) and another
// behaves; a browser that gives the token as Basic's password must show
// the page, the rude client's failed CLIENT-RATE with the request it
// quotes, the journal filtered to the 429s, and the clock an hour later
// after a click on its button; and no whole key anywhere in the page. Then
// the token as a user gives it: in the page's URL (http://any:TOKEN@…),
// where the page must load or ask for it, never show empty panels
// (browsers refuse to fetch from a URL that holds credentials), and keep
// no token in the URL; and not at all,
// where the page must ask for it, refuse a wrong one, load with the right
// one, keep it for the tab (a reload needs no asking; another tab asks
// again) and keep it out of the URL and of local storage.
func checkUI(simBin, chromium, shot string) error {
	if simBin == "" {
		return errors.New("--simulator is required")
	}
	work, err := os.MkdirTemp("", "tcm-ui-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	const token = "ui-check-token-0123456789"
	infoPath := filepath.Join(work, "info.json")
	cmd := exec.CommandContext(ctx, simBin, "--addr", "127.0.0.1:0", "--speed", "0", "--control-token", token,
		"--info-file", infoPath, "--log-level", "warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var info struct {
		URL, ProKey, FreeKey, RevokedKey string
	}
	for i := 0; ; i++ {
		if raw, err := os.ReadFile(infoPath); err == nil {
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

	// The clients, from Go: the Pro key's sends 21 feed requests at once
	// (the 21st is over the limit: CLIENT-RATE), the free key's one.
	feed := func(key string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, info.URL+"/api/public-feed?limit=5", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	for range 21 {
		if err := feed(info.ProKey); err != nil {
			return err
		}
	}
	if err := feed(info.FreeKey); err != nil {
		return err
	}
	// Something to see under faults and scenarios.
	control := func(method, path, body string) error {
		req, _ := http.NewRequestWithContext(ctx, method, info.URL+"/_control/"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Control-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return fmt.Errorf("%s /_control/%s: %d", method, path, resp.StatusCode)
		}
		return nil
	}
	if err := control("POST", "faults", `{"operation":"videos","status":503,"count":2,"retryAfter":5}`); err != nil {
		return err
	}
	if err := control("POST", "scenarios", `{"name":"slow-answers"}`); err != nil {
		return err
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1360, 1000),
		chromedp.UserDataDir(filepath.Join(work, "profile")),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("watcher:"+token))
	withToken := func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": basic}})
		return chromedp.Void{}, err
	}
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1360, 1000), withToken, chromedp.Navigate(info.URL+"/_control/ui")); err != nil {
		return fmt.Errorf("chromium: %w", err)
	}
	failed := 0
	expect := func(ok bool, what string, v any) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			failed++
		}
		fmt.Printf("%s %s (%v)\n", mark, what, v)
	}
	wait := func(cond string) bool {
		_, err := chromedp.Run(bctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(15*time.Second)))
		return err == nil
	}
	eval := func(js string) string {
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](js))
		if err != nil {
			return "error: " + err.Error()
		}
		return s
	}

	expect(wait(`document.body.dataset.loaded === "true"`), "the page loads for a browser that sends the token (Basic)", eval(`document.title`))
	rule := `document.querySelector('.client.failed tr[data-requirement="CLIENT-RATE"][data-result="failed"]')`
	expect(wait(rule+` !== null`), "it shows the rude client's failed requirement CLIENT-RATE", eval(`(`+rule+` || {}).textContent || "none"`))
	quote := eval(`Array.from(document.querySelectorAll('.client.failed .finding[data-requirement="CLIENT-RATE"] .quote')).map(e => e.textContent).join(" | ")`)
	expect(strings.Contains(quote, "GET /api/public-feed?limit=5 → 429"), "its finding quotes the request", quote)
	passed := eval(`String(document.querySelectorAll('.client.passed').length)`)
	expect(passed == "1", "the polite client passed", passed)
	faults := eval(`document.getElementById("faults").textContent + " / " + document.getElementById("scenarios").textContent`)
	expect(strings.Contains(faults, "videos: status 503") && strings.Contains(faults, "slow-answers"), "it shows the fault and the scenario", faults)

	eval(`(() => { const e = document.getElementById("st"); e.value = "429"; e.dispatchEvent(new Event("input")); return "" })()`)
	only429 := `(() => { const rows = document.querySelectorAll("#journal tr[data-status]"); return rows.length > 0 && Array.from(rows).every(r => r.dataset.status === "429") })()`
	expect(wait(only429), "the journal filtered by status shows the 429s only", eval(`String(document.querySelectorAll("#journal tr[data-status]").length) + " rows"`))
	eval(`(() => { document.getElementById("clear-filters").click(); return "" })()`)

	before := eval(`document.getElementById("now").textContent`)
	eval(`(() => { document.getElementById("by").value = "1h"; document.getElementById("advance").click(); return "" })()`)
	moved := wait(`document.getElementById("now").textContent !== ` + jsString(before))
	after := eval(`document.getElementById("now").textContent`)
	t0, e0 := time.Parse(time.RFC3339, before)
	t1, e1 := time.Parse(time.RFC3339, after)
	expect(moved && e0 == nil && e1 == nil && t1.Sub(t0) == time.Hour, "the button advances the clock by the hour asked", before+" → "+after)
	wait(`document.querySelectorAll("#journal tr[data-status]").length > 5`)

	html := eval(`document.documentElement.outerHTML`)
	leaked := 0
	for _, k := range []string{info.ProKey, info.FreeKey, info.RevokedKey} {
		if k == "" || strings.Contains(html, k) {
			leaked++
		}
	}
	expect(leaked == 0 && strings.Contains(html, "tcm_…"), "no whole key in the page, only hints (tcm_…#3f9a)", fmt.Sprintf("%d keys whole", leaked))

	// The token in the page's URL, in a tab of its own (no Basic header).
	tab := func() (context.Context, context.CancelFunc) { return chromedp.NewContext(bctx) }
	tab1, close1 := tab()
	defer close1()
	in := func(ctx context.Context, js string) string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			return "error: " + err.Error()
		}
		return s
	}
	poll := func(ctx context.Context, cond string) bool {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(15*time.Second)))
		return err == nil
	}
	// (Chromium gives the page no credentials of its URL: where a browser
	// does, the page takes the token from there; either way it loads or
	// asks, never shows empty panels.)
	withCreds := strings.Replace(info.URL, "://", "://watcher:"+token+"@", 1) + "/_control/ui"
	ready1 := chromedp.Do(tab1, chromedp.Navigate(withCreds)) == nil &&
		poll(tab1, `document.body.dataset.loaded === "true" || !document.getElementById("token-form").hidden`)
	how := in(tab1, `document.body.dataset.loaded === "true" ? "loaded" : "asked"`)
	if how == "asked" {
		in(tab1, `(() => { document.getElementById("token").value = `+jsString(token)+`; document.getElementById("token-form").requestSubmit(); return "" })()`)
	}
	loaded1 := ready1 && poll(tab1, `document.body.dataset.loaded === "true" && document.querySelectorAll("#accounts tr").length > 0`)
	href1 := in(tab1, `location.href`)
	expect(loaded1 && !strings.Contains(href1, token), "the token in the page's URL: the page "+how+", then shows the panels; the URL holds no token", href1)

	// No token at all: the page asks for it.
	tab2, close2 := tab()
	defer close2()
	asked := chromedp.Do(tab2, chromedp.Navigate(info.URL+"/_control/ui")) == nil && poll(tab2, `!document.getElementById("token-form").hidden`)
	expect(asked && in(tab2, `String(document.body.dataset.loaded === "true")`) == "false", "no token: the page asks for it", in(tab2, `document.getElementById("token-form").textContent.trim()`))
	give := func(ctx context.Context, t string) {
		in(ctx, `(() => { document.getElementById("token").value = `+jsString(t)+`; document.getElementById("token-form").requestSubmit(); return "" })()`)
	}
	give(tab2, "not-the-token-at-all")
	refused := poll(tab2, `document.getElementById("status").textContent.includes("refused") && !document.getElementById("token-form").hidden`)
	expect(refused, "a wrong token is refused, and asked for again", in(tab2, `document.getElementById("status").textContent`))
	give(tab2, token)
	expect(poll(tab2, `document.body.dataset.loaded === "true" && document.getElementById("token-form").hidden`), "the right token: the page loads", in(tab2, `document.getElementById("now").textContent`))
	kept := chromedp.Do(tab2, chromedp.Reload()) == nil && poll(tab2, `document.body.dataset.loaded === "true"`)
	where := in(tab2, `location.href + " session:" + (sessionStorage.getItem("tcmkit-control-token") !== null) + " local:" + localStorage.length`)
	expect(kept && !strings.Contains(where, token) && strings.Contains(where, "session:true local:0"), "it is kept for the tab (a reload needs no asking), out of the URL and of local storage", where)
	tab3, close3 := tab()
	defer close3()
	again := chromedp.Do(tab3, chromedp.Navigate(info.URL+"/_control/ui")) == nil && poll(tab3, `!document.getElementById("token-form").hidden`)
	expect(again, "another tab asks again", in(tab3, `String(!document.getElementById("token-form").hidden)`))

	if shot != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			return fmt.Errorf("chromium: screenshot: %w", err)
		}
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			return err
		}
		fmt.Printf("screenshot: %s\n", shot)
	}
	if failed > 0 {
		return fmt.Errorf("%d check(s) of the page failed", failed)
	}
	return nil
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(s)
	return strings.TrimSpace(b.String())
}
