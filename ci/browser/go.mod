// The browser check of ci/browser.sh, a module of its own: it drives
// Debian's Chromium through the DevTools protocol (chromedp), which the kit
// itself does not need. It talks to the simulator over HTTP only.
module github.com/tcmkit/tcmkit/ci/browser

go 1.26.0

require github.com/chromedp/chromedp v0.23.0

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
)
