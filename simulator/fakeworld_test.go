//go:build fakeworld

package simulator

// A tiny stand-in for simulator/world, for working on the server before the
// world compiles: go test -tags fakeworld ./simulator/

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

type fakeStore struct {
	mu       sync.Mutex
	now      time.Time
	accounts []account
	events   int
}

func openStore(cfg storeConfig) (store, error) {
	return &fakeStore{now: cfg.Start, events: 300}, nil
}

func importStore(r io.Reader) (store, error) {
	var v struct {
		Now      time.Time
		Accounts []account
		Events   int
	}
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		return nil, err
	}
	return &fakeStore{now: v.Now, accounts: v.Accounts, events: v.Events}, nil
}

func (f *fakeStore) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
func (f *fakeStore) AdvanceTo(t time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for f.now.Add(15*time.Minute).Compare(t) <= 0 {
		f.now = f.now.Add(15 * time.Minute)
		f.events++
		n++
	}
	return n
}
func (f *fakeStore) PollAll() int          { f.mu.Lock(); defer f.mu.Unlock(); f.events++; return 1 }
func (f *fakeStore) SetEdgeRate(r float64) {}
func (f *fakeStore) CreateAccount(plan string) account {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := account{ID: fmt.Sprintf("acc%d", len(f.accounts)+1), Plan: plan, Channels: []string{"ch1"}}
	f.accounts = append(f.accounts, a)
	return a
}
func (f *fakeStore) Account(id string) (account, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.accounts {
		if a.ID == id {
			return a, true
		}
	}
	return account{}, false
}
func (f *fakeStore) Accounts() []account {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]account(nil), f.accounts...)
}
func (f *fakeStore) SetPlan(id, plan string) (account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, a := range f.accounts {
		if a.ID == id {
			f.accounts[i].Plan = plan
			return f.accounts[i], nil
		}
	}
	return account{}, errNoAccount
}
func (f *fakeStore) FeedPage(accountID, cursor string, limit int) ([]byte, error) {
	f.mu.Lock()
	n := f.events
	f.mu.Unlock()
	start := n
	if cursor != "" {
		acc, pos, ok := strings.Cut(cursor, ".")
		i, err := strconv.Atoi(pos)
		if !ok || acc != accountID || err != nil || i < 0 || i > n {
			return nil, errCursor
		}
		start = i
	}
	var b strings.Builder
	b.WriteString(`{"events":[`)
	end := max(start-limit, 0)
	for i := start; i > end; i-- {
		if i != start {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"e%d","createdAt":%d,"type":"subscriber_change","channel":{"id":"ch1","platformChannelId":"UC1","title":"Chan","thumbnailUrl":null},"oldSubscriberCount":null,"newSubscriberCount":%d}`, i, int64(1700000000000)+int64(i), i*1000)
	}
	b.WriteString(`],"nextCursor":`)
	if end > 0 {
		fmt.Fprintf(&b, `"%s.%d"`, accountID, end)
	} else {
		b.WriteString("null")
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}
func (f *fakeStore) Videos(accountID string, ids []string) ([]byte, error) {
	return json.Marshal(map[string]any{"videos": []any{}, "missingVideoIds": ids})
}
func (f *fakeStore) Export(w io.Writer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return json.NewEncoder(w).Encode(map[string]any{"Now": f.now, "Accounts": f.accounts, "Events": f.events})
}
