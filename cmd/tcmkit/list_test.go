package main

import (
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// TestConformList: tcmkit conform --list names the specs the label filter
// keeps, with their requirements, and the budget, and sends no request to
// the target. (Ginkgo runs once in a process: this is this package's only
// run of the suite.)
func TestConformList(t *testing.T) {
	var hits atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	code, out, errs := runArgs("conform", "--list", "--label-filter", "health", "--target", "http://"+ln.Addr().String(), "--pro-key", "tcm_notakeyatall000000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"POST /api/public/health", "answers {} with 200", "HEALTH-OK", "Request budget: at most 20 requests a minute per key", "--max-pages 50"} {
		if !strings.Contains(out, want) {
			t.Errorf("the list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "RATE-ALLOWS-20") || strings.Contains(out, "tcm_notakey") {
		t.Errorf("the list holds a spec the filter leaves out, or the key:\n%s", out)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("--list sent %d requests to the target", n)
	}
}
