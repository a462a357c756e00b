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
	info, stop, err := startSimulator(ctx, simBin, work, token)
	if err != nil {
		return err
	}
	defer stop()
	if err := makeClients(ctx, info, token); err != nil {
		return err
	}

	actx, acancel := chromedp.NewExecAllocator(ctx, chromiumOptions(chromium, filepath.Join(work, "profile"), chromedp.WindowSize(1360, 1000))...)
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
	u := &uiCheck{}
	u.panels(bctx, info)
	u.tokenInURL(bctx, info, token)
	u.tokenAsked(bctx, info, token)

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
	if u.failed > 0 {
		return fmt.Errorf("%d check(s) of the page failed", u.failed)
	}
	return nil
}

// simInfo is what the simulator's --info-file says.
type simInfo struct {
	URL, ProKey, FreeKey, RevokedKey string
}

// startSimulator starts the simulator behind the control token on its
// manual clock and waits for its info file; stop ends it.
func startSimulator(ctx context.Context, simBin, work, token string) (info simInfo, stop func(), err error) {
	infoPath := filepath.Join(work, "info.json")
	cmd := exec.CommandContext(ctx, simBin, "--addr", "127.0.0.1:0", "--speed", "0", "--control-token", token,
		"--info-file", infoPath, "--log-level", "warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return info, nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	for i := 0; ; i++ {
		if raw, err := os.ReadFile(infoPath); err == nil {
			if err := json.Unmarshal(raw, &info); err != nil {
				stop()
				return info, nil, err
			}
			return info, stop, nil
		}
		if i == 200 {
			stop()
			return info, nil, errors.New("the simulator did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// makeClients gives the page something to show: the Pro key's client
// sends 21 feed requests at once (the 21st is over the limit:
// CLIENT-RATE), the free key's one; a fault and a scenario are on.
func makeClients(ctx context.Context, info simInfo, token string) error {
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
	return control("POST", "scenarios", `{"name":"slow-answers"}`)
}

// uiCheck prints each check of the page, ok or FAIL, and counts the
// failed ones.
type uiCheck struct{ failed int }

func (u *uiCheck) expect(ok bool, what string, v any) {
	mark := "ok  "
	if !ok {
		mark = "FAIL"
		u.failed++
	}
	fmt.Printf("%s %s (%v)\n", mark, what, v)
}

// poll waits up to 15 s for a JavaScript condition in the tab.
func poll(ctx context.Context, cond string) bool {
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(15*time.Second)))
	return err == nil
}

// eval is a JavaScript expression's string value in the tab, or the error.
func eval(ctx context.Context, js string) string {
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		return "error: " + err.Error()
	}
	return s
}

// panels checks the page loaded with the token as Basic's password: the
// rude client's failed CLIENT-RATE and its quote, the polite client, the
// fault and the scenario, the journal's filter, the clock's button, and
// no whole key.
func (u *uiCheck) panels(b context.Context, info simInfo) {
	u.expect(poll(b, `document.body.dataset.loaded === "true"`), "the page loads for a browser that sends the token (Basic)", eval(b, `document.title`))
	rule := `document.querySelector('.client.failed tr[data-requirement="CLIENT-RATE"][data-result="failed"]')`
	u.expect(poll(b, rule+` !== null`), "it shows the rude client's failed requirement CLIENT-RATE", eval(b, `(`+rule+` || {}).textContent || "none"`))
	quote := eval(b, `Array.from(document.querySelectorAll('.client.failed .finding[data-requirement="CLIENT-RATE"] .quote')).map(e => e.textContent).join(" | ")`)
	u.expect(strings.Contains(quote, "GET /api/public-feed?limit=5 → 429"), "its finding quotes the request", quote)
	passed := eval(b, `String(document.querySelectorAll('.client.passed').length)`)
	u.expect(passed == "1", "the polite client passed", passed)
	faults := eval(b, `document.getElementById("faults").textContent + " / " + document.getElementById("scenarios").textContent`)
	u.expect(strings.Contains(faults, "videos: status 503") && strings.Contains(faults, "slow-answers"), "it shows the fault and the scenario", faults)

	eval(b, `(() => { const e = document.getElementById("st"); e.value = "429"; e.dispatchEvent(new Event("input")); return "" })()`)
	only429 := `(() => { const rows = document.querySelectorAll("#journal tr[data-status]"); return rows.length > 0 && Array.from(rows).every(r => r.dataset.status === "429") })()`
	u.expect(poll(b, only429), "the journal filtered by status shows the 429s only", eval(b, `String(document.querySelectorAll("#journal tr[data-status]").length) + " rows"`))
	eval(b, `(() => { document.getElementById("clear-filters").click(); return "" })()`)

	before := eval(b, `document.getElementById("now").textContent`)
	eval(b, `(() => { document.getElementById("by").value = "1h"; document.getElementById("advance").click(); return "" })()`)
	moved := poll(b, `document.getElementById("now").textContent !== `+jsString(before))
	after := eval(b, `document.getElementById("now").textContent`)
	t0, e0 := time.Parse(time.RFC3339, before)
	t1, e1 := time.Parse(time.RFC3339, after)
	u.expect(moved && e0 == nil && e1 == nil && t1.Sub(t0) == time.Hour, "the button advances the clock by the hour asked", before+" → "+after)
	poll(b, `document.querySelectorAll("#journal tr[data-status]").length > 5`)

	html := eval(b, `document.documentElement.outerHTML`)
	leaked := 0
	for _, k := range []string{info.ProKey, info.FreeKey, info.RevokedKey} {
		if k == "" || strings.Contains(html, k) {
			leaked++
		}
	}
	u.expect(leaked == 0 && strings.Contains(html, "tcm_…"), "no whole key in the page, only hints (tcm_…#3f9a)", fmt.Sprintf("%d keys whole", leaked))
}

// tokenInURL: the token in the page's URL, in a tab of its own (no Basic
// header). Chromium gives the page no credentials of its URL: where a
// browser does, the page takes the token from there; either way it loads
// or asks, never shows empty panels.
func (u *uiCheck) tokenInURL(b context.Context, info simInfo, token string) {
	tab, closeTab := chromedp.NewContext(b)
	defer closeTab()
	withCreds := strings.Replace(info.URL, "://", "://watcher:"+token+"@", 1) + "/_control/ui"
	ready := chromedp.Do(tab, chromedp.Navigate(withCreds)) == nil &&
		poll(tab, `document.body.dataset.loaded === "true" || !document.getElementById("token-form").hidden`)
	how := eval(tab, `document.body.dataset.loaded === "true" ? "loaded" : "asked"`)
	if how == "asked" {
		give(tab, token)
	}
	loaded := ready && poll(tab, `document.body.dataset.loaded === "true" && document.querySelectorAll("#accounts tr").length > 0`)
	href := eval(tab, `location.href`)
	u.expect(loaded && !strings.Contains(href, token), "the token in the page's URL: the page "+how+", then shows the panels; the URL holds no token", href)
}

// give types a token into the page's form and submits it.
func give(tab context.Context, token string) {
	eval(tab, `(() => { document.getElementById("token").value = `+jsString(token)+`; document.getElementById("token-form").requestSubmit(); return "" })()`)
}

// tokenAsked: no token at all: the page asks for it, refuses a wrong one,
// loads with the right one and keeps it for the tab alone, out of the URL
// and of local storage.
func (u *uiCheck) tokenAsked(b context.Context, info simInfo, token string) {
	tab, closeTab := chromedp.NewContext(b)
	defer closeTab()
	asked := chromedp.Do(tab, chromedp.Navigate(info.URL+"/_control/ui")) == nil && poll(tab, `!document.getElementById("token-form").hidden`)
	u.expect(asked && eval(tab, `String(document.body.dataset.loaded === "true")`) == "false", "no token: the page asks for it", eval(tab, `document.getElementById("token-form").textContent.trim()`))
	give(tab, "not-the-token-at-all")
	refused := poll(tab, `document.getElementById("status").textContent.includes("refused") && !document.getElementById("token-form").hidden`)
	u.expect(refused, "a wrong token is refused, and asked for again", eval(tab, `document.getElementById("status").textContent`))
	give(tab, token)
	u.expect(poll(tab, `document.body.dataset.loaded === "true" && document.getElementById("token-form").hidden`), "the right token: the page loads", eval(tab, `document.getElementById("now").textContent`))
	kept := chromedp.Do(tab, chromedp.Reload()) == nil && poll(tab, `document.body.dataset.loaded === "true"`)
	where := eval(tab, `location.href + " session:" + (sessionStorage.getItem("tcmkit-control-token") !== null) + " local:" + localStorage.length`)
	u.expect(kept && !strings.Contains(where, token) && strings.Contains(where, "session:true local:0"), "it is kept for the tab (a reload needs no asking), out of the URL and of local storage", where)
	other, closeOther := chromedp.NewContext(b)
	defer closeOther()
	again := chromedp.Do(other, chromedp.Navigate(info.URL+"/_control/ui")) == nil && poll(other, `!document.getElementById("token-form").hidden`)
	u.expect(again, "another tab asks again", eval(other, `String(!document.getElementById("token-form").hidden)`))
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(s)
	return strings.TrimSpace(b.String())
}
