package record

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// keyServer serves pages pages of one event each, whose cursors are
// "<page>-" followed by the key the request carried when withKey (a
// server that puts the key into its cursor); it answers 400 to a cursor
// that does not hold the key then. stopAt cancels after that request.
func keyServer(t *testing.T, pages int, withKey bool) (*httptest.Server, *int) {
	t.Helper()
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/public/videos" {
			fmt.Fprint(w, `{"videos":[],"missingVideoIds":[]}`)
			return
		}
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		page := 0
		if c := r.URL.Query().Get("cursor"); c != "" {
			p, rest, _ := strings.Cut(c, "-")
			if withKey && rest != key {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":"bad_request","message":"cursor"}`)
				return
			}
			fmt.Sscan(p, &page)
		}
		next := "null"
		if page+1 < pages {
			c := fmt.Sprint(page + 1)
			if withKey {
				c += "-" + key
			}
			next = fmt.Sprintf("%q", c)
		}
		fmt.Fprintf(w, `{"events":[%s],"nextCursor":%s}`, renamed(fmt.Sprintf("e%d", page), int64(1767225600000-page*1000), "t"), next)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// stopped records until the request numbered at, and leaves the progress.
func stopped(t *testing.T, srv *httptest.Server, key, out string, at int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r := &Recorder{Target: srv.URL, ProKey: key, Out: out, Clock: &fakeClock{now: recordedAt},
		AfterRequest: func(n int) {
			if n == at {
				cancel()
			}
		}}
	if _, err := r.Run(ctx); err == nil || !strings.Contains(err.Error(), "partial") {
		t.Fatalf("stopped: %v", err)
	}
}

// TestResumeWithAnotherKeyRefused: a recording begun with account A's key
// is not resumed with account B's (one world of two accounts), in one
// line that says how to start over, before any request.
func TestResumeWithAnotherKeyRefused(t *testing.T) {
	t.Parallel()
	srv, n := keyServer(t, 4, false)
	out := filepath.Join(t.TempDir(), "w.json")
	stopped(t, srv, hostileKey, out, 2)
	before := *n
	other := "tcm_ZYXWVUTSRQPONMLKJIHGFEDCBA987654"
	r := &Recorder{Target: srv.URL, ProKey: other, Out: out, Clock: &fakeClock{now: recordedAt}}
	_, err := r.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "begun with another --pro-key") || !strings.Contains(err.Error(), "remove "+out+".partial to start over") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("resume with another key: %v", err)
	}
	if _, ok := err.(*SettingError); !ok {
		t.Errorf("not a setting error (exit 2): %T", err)
	}
	if *n != before {
		t.Errorf("%d requests sent before the refusal", *n-before)
	}
	if strings.Contains(err.Error(), hostileKey[4:12]) || strings.Contains(err.Error(), other[4:12]) {
		t.Errorf("a key in the message: %v", err)
	}
	// The same key goes on.
	r.ProKey = hostileKey
	if res, err := r.Run(t.Context()); err != nil || !res.Resumed {
		t.Fatalf("resume with the same key: %v", err)
	}
}

// TestCursorHoldingTheKey: a server whose cursor holds the key is walked
// to its end in one run (the cursor is sent as the server gave it); a
// resume after a stop where the cursor held it says at once that it
// cannot go on, never sending the redacted cursor.
func TestCursorHoldingTheKey(t *testing.T) {
	t.Parallel()
	srv, _ := keyServer(t, 4, true)
	dir := t.TempDir()
	r := &Recorder{Target: srv.URL, ProKey: hostileKey, Out: filepath.Join(dir, "one.json"), Clock: &fakeClock{now: recordedAt}}
	res, err := r.Run(t.Context())
	if err != nil || res.Recording.Events != 4 {
		t.Fatalf("one run: %v, %+v", err, res)
	}
	b, _ := os.ReadFile(r.Out)
	if strings.Contains(string(b), hostileKey[4:12]) {
		t.Error("the key in the recording")
	}

	out := filepath.Join(dir, "two.json")
	stopped(t, srv, hostileKey, out, 2)
	p, _ := os.ReadFile(out + ".partial")
	if strings.Contains(string(p), hostileKey[4:12]) {
		t.Error("the key in the progress file")
	}
	srv2, n := keyServer(t, 4, true)
	r = &Recorder{Target: srv2.URL, ProKey: hostileKey, Out: out, Clock: &fakeClock{now: recordedAt}}
	os.WriteFile(out+".partial", []byte(strings.ReplaceAll(string(p), srv.URL, srv2.URL)), 0o600)
	_, err = r.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "cannot be resumed") || *n != 0 {
		t.Fatalf("resume: %v after %d requests; want it refused at once", err, *n)
	}
}
