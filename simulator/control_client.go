package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// Control calls the control API of a running simulator (in this process or
// another) over HTTP. The zero value is unusable: set URL.
type Control struct {
	// URL is the simulator's base URL, such as http://127.0.0.1:8080; the
	// control API is under ControlPrefix.
	URL string
	// Token is sent as X-Control-Token when the simulator wants one.
	Token string
	// HTTP sends the requests; nil uses a client with a 30 s timeout.
	HTTP *http.Client
}

// Account is an account as the control API shows it. Key is set only in
// the answer that created the account; otherwise KeyHint is the key's
// redacted form.
type Account struct {
	ID       string   `json:"id"`
	Plan     string   `json:"plan"`
	KeyHint  string   `json:"keyHint,omitempty"`
	Key      string   `json:"key,omitempty"`
	Channels []string `json:"channels"`
}

// maxControlAnswer bounds what Control reads of one answer; an exported
// world is the largest answer and is not read through Call.
const maxControlAnswer = 8 << 20

// Call sends one control request (body encoded as JSON unless nil) and
// decodes the answer into out (unless nil). An answer other than want is
// an error that quotes the answer's ErrorBody.
func (c Control) Call(ctx context.Context, method, path string, body, out any, want int) error {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("simulator control: %s %s: %w", method, path, err)
		}
		r = bytes.NewReader(raw)
	}
	url := strings.TrimSuffix(c.URL, "/") + ControlPrefix + strings.TrimPrefix(path, "/")
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return fmt.Errorf("simulator control: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentTypeJSON)
	}
	if c.Token != "" {
		req.Header.Set(controlTokenHeader, c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("simulator control: %s %s: %w", method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxControlAnswer))
	if err != nil {
		return fmt.Errorf("simulator control: %s %s: %w", method, req.URL.Path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("simulator control: %s %s answered %d, want %d: %s", method, req.URL.Path, resp.StatusCode, want, jsondoc.Excerpt(string(bytes.TrimSpace(raw)), 300))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("simulator control: %s %s: %w", method, req.URL.Path, err)
		}
	}
	return nil
}

// Info is GET /_control/info: the URLs, the seeded keys and the time.
func (c Control) Info(ctx context.Context) (Info, error) {
	var info Info
	err := c.Call(ctx, http.MethodGet, "info", nil, &info, http.StatusOK)
	return info, err
}

// CreateAccount makes an account of plan ("pro" or "free") with a new key.
func (c Control) CreateAccount(ctx context.Context, plan string) (Account, error) {
	var a Account
	err := c.Call(ctx, http.MethodPost, "accounts", map[string]string{"plan": plan}, &a, http.StatusCreated)
	if err == nil && (a.ID == "" || a.Key == "") {
		err = fmt.Errorf("simulator control: the created %s account has no id or key", plan)
	}
	return a, err
}

// RegenerateKey gives an account a new key, which revokes the old one.
func (c Control) RegenerateKey(ctx context.Context, accountID string) (string, error) {
	var k struct {
		Key string `json:"key"`
	}
	err := c.Call(ctx, http.MethodPost, "accounts/"+accountID+"/key", nil, &k, http.StatusOK)
	return k.Key, err
}

// Advance moves the virtual clock forward by d, rounded up to a
// millisecond so that a wait is never shorter than asked.
func (c Control) Advance(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if r := d % time.Millisecond; r != 0 {
		d += time.Millisecond - r
	}
	return c.Call(ctx, http.MethodPost, "clock/advance", map[string]string{"duration": d.String()}, nil, http.StatusOK)
}

// Now is the simulator's virtual time.
func (c Control) Now(ctx context.Context) (time.Time, error) {
	var v struct {
		Now int64 `json:"now"`
	}
	if err := c.Call(ctx, http.MethodGet, "clock", nil, &v, http.StatusOK); err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(v.Now).UTC(), nil
}

// Reset puts the simulator back to its state at start.
func (c Control) Reset(ctx context.Context) error {
	return c.Call(ctx, http.MethodPost, "reset", nil, nil, http.StatusOK)
}

// AddFault injects an outage (see FaultSpec).
func (c Control) AddFault(ctx context.Context, f FaultSpec) (FaultSpec, error) {
	err := c.Call(ctx, http.MethodPost, "faults", f, &f, http.StatusCreated)
	return f, err
}

// ClearFaults removes every injected outage.
func (c Control) ClearFaults(ctx context.Context) error {
	return c.Call(ctx, http.MethodDelete, "faults", nil, nil, http.StatusOK)
}

// Requests reads the request journal (GET /_control/requests), oldest
// first, filtered as the route takes it: url.Values{"status": {"429"}},
// {"key": {"abcd"}} (the key's last characters), {"operation": {"feed"}},
// {"since": {ms}}, and so on. A test asserts on what its client sent.
func (c Control) Requests(ctx context.Context, filter url.Values) ([]Entry, error) {
	var page struct {
		Requests []Entry `json:"requests"`
	}
	path := "requests"
	if len(filter) > 0 {
		path += "?" + filter.Encode()
	}
	err := c.Call(ctx, http.MethodGet, path, nil, &page, http.StatusOK)
	return page.Requests, err
}

// ClearRequests empties the request journal.
func (c Control) ClearRequests(ctx context.Context) error {
	return c.Call(ctx, http.MethodDelete, "requests", nil, nil, http.StatusOK)
}
