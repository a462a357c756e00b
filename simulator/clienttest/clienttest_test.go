package clienttest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// recorder is a TB that keeps what a test would print, and runs its
// cleanups when asked.
type recorder struct {
	errors   []string
	cleanups []func()
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (r *recorder) Logf(format string, args ...any)   {}
func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func get(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/api/public-feed?limit=1", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestAPoliteClientPasses(t *testing.T) {
	r := &recorder{}
	sim := Start(r, Options{})
	for range 25 { // paced: 20 a minute
		if got := get(t, sim.URL, sim.Keys.Pro); got != http.StatusOK {
			t.Fatalf("paced: %d", got)
		}
		if err := sim.Sleep(context.Background(), 3*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	r.end()
	if len(r.errors) > 0 {
		t.Errorf("a polite client failed: %v", r.errors)
	}
}

func TestAMisbehavingClientFailsWithItsFindings(t *testing.T) {
	r := &recorder{}
	sim := Start(r, Options{})
	for range 22 { // the 22nd is too soon after the 429 of the 21st
		get(t, sim.URL, sim.Keys.Pro)
	}
	get(t, sim.URL, "") // no key
	r.end()
	if len(r.errors) != 1 {
		t.Fatalf("errors: %q", r.errors)
	}
	msg := r.errors[0]
	for _, want := range []string{
		"the client broke client requirements of the contract",
		"client tcm_…", "(acc_1), 22 requests, broke CLIENT-RETRY-AFTER, CLIENT-RATE:",
		"CLIENT-RATE: #21 GET /api/public-feed?limit=1 → 429 rate_limited",
		"2 requests broke it; the last: #22 GET",
		"CLIENT-RETRY-AFTER: #22 GET /api/public-feed?limit=1 → 429 rate_limited",
		"see #21 GET /api/public-feed?limit=1 → 429 rate_limited",
		"client requests without a key, 1 requests, broke CLIENT-BEARER:",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, sim.Keys.Pro[4:12]) {
		t.Errorf("the failure shows a key:\n%s", msg)
	}
}

// A test of a misbehaving client says which requirements it breaks; a
// scenario armed that no client meets fails the test.
func TestExpectAndScenario(t *testing.T) {
	r := &recorder{}
	sim := Start(r, Options{Expect: []catalogue.ID{catalogue.ClientBearer}, Scenario: "malformed-body"})
	get(t, sim.URL, "")
	r.end()
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "scenario malformed-body was armed, but no client met it") || strings.Contains(r.errors[0], "expected to break") {
		t.Errorf("errors: %q", r.errors)
	}
}

// Attached to a running simulator, a test gets accounts of its own and is
// judged on their keys only.
func TestAttach(t *testing.T) {
	host := &recorder{}
	running := Start(host, Options{Expect: []catalogue.ID{catalogue.ClientBearer}})
	get(t, running.URL, "") // someone else's fault, on the same simulator

	r := &recorder{}
	sim := Start(r, Options{URL: running.URL})
	if sim.Keys.Pro == "" || sim.Keys.Pro == running.Keys.Pro || sim.Server != nil {
		t.Fatalf("attached: %+v", sim.Keys)
	}
	get(t, sim.URL, sim.Keys.Pro)
	if err := sim.Sleep(context.Background(), time.Minute); err != nil { // a manual clock: moved
		t.Fatal(err)
	}
	r.end()
	if len(r.errors) > 0 {
		t.Errorf("attached: %q", r.errors)
	}
	host.end()
	if len(host.errors) > 0 {
		t.Errorf("host: %q", host.errors)
	}
}
