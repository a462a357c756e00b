package simulator

import (
	"errors"
	"io"
	"time"
)

// store is what the server needs of the world (simulator/world): data and
// virtual time, no HTTP. world.go adapts *world.World to it; keeping the
// server on this small interface lets its tests say exactly what they rely on.
type store interface {
	Now() time.Time
	AdvanceTo(t time.Time) int
	PollAll() int
	SetEdgeRate(r float64)
	CreateAccount(plan string) account
	Account(id string) (account, bool)
	Accounts() []account
	SetPlan(id, plan string) (account, error)
	FeedPage(accountID, cursor string, limit int) ([]byte, error)
	Videos(accountID string, ids []string) ([]byte, error)
	Export(w io.Writer) error
}

// account mirrors world.Account.
type account struct {
	ID       string
	Plan     string
	Channels []string
}

// The plans, as the world and the control API spell them.
const (
	planFree = "free"
	planPro  = "pro"
)

// errCursor and errNoAccount are what the store's errors mean to the server;
// the adapter wraps the world's sentinels so errors.Is finds either.
var (
	errCursor    = errors.New("simulator: unknown cursor")
	errNoAccount = errors.New("simulator: no such account")
)

// storeConfig is what a store is built from.
type storeConfig struct {
	Seed     int64
	Channels int
	History  time.Duration
	Start    time.Time
	EdgeRate float64
}
