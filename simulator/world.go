//go:build !fakeworld

package simulator

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tcmkit/tcmkit/simulator/world"
)

// worldStore adapts *world.World to the server's store.
type worldStore struct{ w *world.World }

func openStore(cfg storeConfig) (store, error) {
	w, err := world.New(world.Config{Seed: cfg.Seed, Channels: cfg.Channels, History: cfg.History, Start: cfg.Start, EdgeRate: cfg.EdgeRate})
	if err != nil {
		return nil, err
	}
	return worldStore{w}, nil
}

func importStore(r io.Reader) (store, error) {
	w, err := world.Import(r)
	if err != nil {
		return nil, err
	}
	return worldStore{w}, nil
}

func fromWorld(a world.Account) account {
	return account{ID: a.ID, Plan: string(a.Plan), Channels: a.Channels}
}

func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, world.ErrCursor):
		return fmt.Errorf("%w: %w", errCursor, err)
	case errors.Is(err, world.ErrNoAccount):
		return fmt.Errorf("%w: %w", errNoAccount, err)
	}
	return err
}

func (s worldStore) Now() time.Time            { return s.w.Now() }
func (s worldStore) AdvanceTo(t time.Time) int { return s.w.AdvanceTo(t) }
func (s worldStore) PollAll() int              { return s.w.PollAll() }
func (s worldStore) SetEdgeRate(r float64)     { s.w.SetEdgeRate(r) }
func (s worldStore) Export(out io.Writer) error {
	return s.w.Export(out)
}

func (s worldStore) CreateAccount(plan string) account {
	return fromWorld(s.w.CreateAccount(world.Plan(plan)))
}

func (s worldStore) Account(id string) (account, bool) {
	a, ok := s.w.Account(id)
	return fromWorld(a), ok
}

func (s worldStore) Accounts() []account {
	as := s.w.Accounts()
	out := make([]account, len(as))
	for i, a := range as {
		out[i] = fromWorld(a)
	}
	return out
}

func (s worldStore) SetPlan(id, plan string) (account, error) {
	a, err := s.w.SetPlan(id, world.Plan(plan))
	return fromWorld(a), mapErr(err)
}

func (s worldStore) FeedPage(accountID, cursor string, limit int) ([]byte, error) {
	b, err := s.w.FeedPage(accountID, cursor, limit)
	return b, mapErr(err)
}

func (s worldStore) Videos(accountID string, ids []string) ([]byte, error) {
	b, err := s.w.Videos(accountID, ids)
	return b, mapErr(err)
}
