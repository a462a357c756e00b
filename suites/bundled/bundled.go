// Package bundled runs the suite's default target: the simulator, started
// in-process on 127.0.0.1 with a fixed seed and a manual clock. The suite
// provisions the accounts and keys it needs through the simulator's control
// API (HTTP, like everything else the suite does), and moves the
// simulator's clock instead of sleeping (ControlClock).
package bundled

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/tcmkit/tcmkit/simulator"
)

// Seed is the fixed seed of the bundled simulator: every run sees the same world.
const Seed = 4

// Keys are the keys the suite provisions: a Pro and a free account, a
// revoked key, and two fresh Pro accounts that only the rate-limit specs
// use (so that their windows are fresh whatever ran before, also with -p).
type Keys struct {
	Pro, Free, Revoked, Burst, Other string
	// Secrets lists every key issued, the revoked key's successor included.
	Secrets []string
}

// Server is a running bundled simulator.
type Server struct {
	URL string
	sim *simulator.Server
	srv *httptest.Server
}

// Start starts the simulator on 127.0.0.1 (httptest listens there).
func Start() (*Server, error) {
	sim, err := simulator.New(simulator.Config{Seed: Seed, Speed: 0})
	if err != nil {
		return nil, fmt.Errorf("bundled: %w", err)
	}
	srv := httptest.NewServer(sim.Handler())
	return &Server{URL: srv.URL, sim: sim, srv: srv}, nil
}

// Handler is the simulator's handler, for wrappers that break it on purpose.
func (s *Server) Handler() http.Handler { return s.sim.Handler() }

// Close stops the listener and the simulator.
func (s *Server) Close() error {
	s.srv.Close()
	return s.sim.Close()
}

// Provision creates the suite's accounts through the control API at base.
func Provision(ctx context.Context, hc *http.Client, base string) (Keys, error) {
	var k Keys
	create := func(plan string) (string, string, error) {
		var a struct{ ID, Key string }
		err := call(ctx, hc, http.MethodPost, base+"/_control/accounts", `{"plan":"`+plan+`"}`, http.StatusCreated, &a)
		if err == nil && (a.ID == "" || a.Key == "") {
			err = fmt.Errorf("bundled: the created %s account has no id or key", plan)
		}
		if err == nil {
			k.Secrets = append(k.Secrets, a.Key)
		}
		return a.ID, a.Key, err
	}
	var err error
	if _, k.Pro, err = create("pro"); err != nil {
		return k, err
	}
	if _, k.Free, err = create("free"); err != nil {
		return k, err
	}
	if _, k.Burst, err = create("pro"); err != nil {
		return k, err
	}
	if _, k.Other, err = create("pro"); err != nil {
		return k, err
	}
	id, old, err := create("pro")
	if err != nil {
		return k, err
	}
	var fresh struct{ Key string }
	if err := call(ctx, hc, http.MethodPost, base+"/_control/accounts/"+id+"/key", "", http.StatusOK, &fresh); err != nil {
		return k, err
	}
	k.Revoked = old
	k.Secrets = append(k.Secrets, fresh.Key)
	return k, nil
}

// call sends one control request and decodes the answer into out.
func call(ctx context.Context, hc *http.Client, method, url, body string, want int, out any) error {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return fmt.Errorf("bundled: %w", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("bundled: control API: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("bundled: control API: %s %s: %w", method, req.URL.Path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("bundled: control API: %s %s answered %d, want %d: %s", method, req.URL.Path, resp.StatusCode, want, bytes.TrimSpace(raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("bundled: control API: %s %s: %w", method, req.URL.Path, err)
		}
	}
	return nil
}
