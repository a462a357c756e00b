// Package bundled runs the suite's default target: the simulator, started
// in-process on 127.0.0.1 with a fixed seed and a manual clock. The suite
// provisions the accounts and keys it needs through the simulator's control
// API (HTTP, like everything else the suite does), and moves the
// simulator's clock instead of sleeping (ControlClock).
package bundled

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/tcmkit/tcmkit/simulator"
)

// Seed is the fixed seed of the bundled simulator: every run sees the same world.
const Seed = 4

// Keys are the keys the suite judges with: the simulator's seeded Pro and
// free accounts (they track overlapping channel sets, neither inside the
// other, so tenant isolation shows), a revoked key, and two fresh Pro
// accounts that only the rate-limit specs use.
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

// Close stops the listener and the simulator.
func (s *Server) Close() error {
	s.srv.Close()
	return s.sim.Close()
}

// Provision creates the suite's accounts through the control API at base.
func Provision(ctx context.Context, hc *http.Client, base string) (Keys, error) {
	ctl := simulator.Control{URL: base, HTTP: hc}
	info, err := ctl.Info(ctx)
	if err != nil {
		return Keys{}, err
	}
	k := Keys{Pro: info.ProKey, Free: info.FreeKey, Secrets: []string{info.ProKey, info.FreeKey, info.RevokedKey}}
	var last simulator.Account
	for _, key := range []*string{&k.Burst, &k.Other, &k.Revoked} {
		if last, err = ctl.CreateAccount(ctx, "pro"); err != nil {
			return k, err
		}
		*key = last.Key
		k.Secrets = append(k.Secrets, last.Key)
	}
	// The last account's first key, regenerated, is the revoked one.
	fresh, err := ctl.RegenerateKey(ctx, last.ID)
	k.Secrets = append(k.Secrets, fresh)
	return k, err
}
