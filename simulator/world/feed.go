package world

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/tcmkit/tcmkit/schemas"
)

type account struct {
	id     string
	plan   Plan
	chans  []int32 // tracked channels, ascending
	tracks []bool  // per channel
	feed   []uint32
}

func (a *account) public(w *World) Account {
	ids := make([]string, len(a.chans))
	for i, c := range a.chans {
		ids[i] = w.channels[c].ID
	}
	return Account{ID: a.id, Plan: a.plan, Channels: ids}
}

// CreateAccount creates an account with plan p (anything but Pro is Free).
// The first account tracks every channel, later ones a seeded subset of
// about half, at least one. Ids are "acc_1", "acc_2", ... (the n-th
// account's is acc_n, unless an import holds that id already: newID).
func (w *World) CreateAccount(p Plan) Account {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.accounts) + 1
	var chans []int32
	if n == 1 {
		for i := range w.channels {
			chans = append(chans, int32(i))
		}
	} else {
		r := w.rngFor(kindAccount, uint64(n), 0, 0)
		for i := range w.channels {
			if r.float() < 0.5 {
				chans = append(chans, int32(i))
			}
		}
		if len(chans) == 0 {
			chans = []int32{int32(r.intn(len(w.channels)))}
		}
	}
	a := w.addAccount(w.newID(n), p, chans)
	return a.public(w)
}

// CreateAccountTracking makes an account that tracks the channels i (in
// seeding order) for which tracks(i) is true, or channel 0 if none is.
func (w *World) CreateAccountTracking(p Plan, tracks func(channel int) bool) Account {
	w.mu.Lock()
	defer w.mu.Unlock()
	chans := []int32{}
	for i := range w.channels {
		if tracks(i) {
			chans = append(chans, int32(i))
		}
	}
	if len(chans) == 0 {
		chans = []int32{0}
	}
	a := w.addAccount(w.newID(len(w.accounts)+1), p, chans)
	return a.public(w)
}

// newID is the id of the n-th account, acc_n, or the first acc_m after
// it that no account holds: an imported world may hold any ids (a
// recording leaves out an account whose feed showed nothing), and an id
// names one account. The caller holds w.mu.
func (w *World) newID(n int) string {
	for ; ; n++ {
		if id := "acc_" + strconv.Itoa(n); w.accountBy[id] == nil {
			return id
		}
	}
}

// addAccount registers an account and indexes its feed from the whole log.
func (w *World) addAccount(id string, p Plan, chans []int32) *account {
	if p != Pro {
		p = Free
	}
	slices.Sort(chans)
	chans = slices.Compact(chans)
	a := &account{id: id, plan: p, chans: chans, tracks: make([]bool, len(w.channels))}
	ai := int32(len(w.accounts))
	for _, c := range chans {
		a.tracks[c] = true
		w.watchers[c] = append(w.watchers[c], ai)
	}
	for pos := range w.log.heads {
		if a.tracks[w.log.heads[pos].channel] {
			a.feed = append(a.feed, uint32(pos))
		}
	}
	w.accounts = append(w.accounts, a)
	w.accountBy[id] = a
	return a
}

// Account returns the account with this id.
func (w *World) Account(id string) (Account, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	a, ok := w.accountBy[id]
	if !ok {
		return Account{}, false
	}
	return a.public(w), true
}

// PlanOf is the plan of account id: Account without the list of channels.
func (w *World) PlanOf(id string) (Plan, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	a, ok := w.accountBy[id]
	if !ok {
		return "", false
	}
	return a.plan, true
}

// Accounts lists the accounts in creation order.
func (w *World) Accounts() []Account {
	w.mu.RLock()
	defer w.mu.RUnlock()
	out := make([]Account, len(w.accounts))
	for i, a := range w.accounts {
		out[i] = a.public(w)
	}
	return out
}

// SetPlan changes an account's plan.
func (w *World) SetPlan(id string, p Plan) (Account, error) {
	if p != Pro && p != Free {
		return Account{}, fmt.Errorf("world: unknown plan %q", p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	a, ok := w.accountBy[id]
	if !ok {
		return Account{}, fmt.Errorf("%w: %q", ErrNoAccount, id)
	}
	a.plan = p
	return a.public(w), nil
}

// FeedPage returns the whole JSON FeedPage of an account: up to limit events
// older than the cursor's (the newest when cursor is ""), newest first. A
// limit outside 1..schemas.MaxPageSize is clamped into it.
func (w *World) FeedPage(accountID, cursor string, limit int) ([]byte, error) {
	return w.AppendFeedPage(nil, accountID, cursor, limit)
}

// AppendFeedPage is FeedPage appending to dst, for a server that reuses its
// buffers (a page is about 30 KB).
func (w *World) AppendFeedPage(dst []byte, accountID, cursor string, limit int) ([]byte, error) {
	limit = min(max(limit, 1), schemas.MaxPageSize)
	w.mu.RLock()
	defer w.mu.RUnlock()
	a, ok := w.accountBy[accountID]
	if !ok {
		return dst, fmt.Errorf("%w: %q", ErrNoAccount, accountID)
	}
	end := len(a.feed) // the page is a.feed[start:end], reversed
	if cursor != "" {
		pos, ok := w.openCursor(accountID, cursor)
		if !ok {
			return dst, ErrCursor
		}
		end, _ = slices.BinarySearch(a.feed, pos)
	}
	start := max(0, end-limit)
	page := a.feed[start:end]

	size := len(`{"events":[],"nextCursor":}`) + cursorLen + 2 + len(page)
	for _, pos := range page {
		size += int(w.log.heads[pos].n)
	}
	b := slices.Grow(dst, size)
	b = append(b, `{"events":[`...)
	for i := len(page) - 1; i >= 0; i-- {
		if i < len(page)-1 {
			b = append(b, ',')
		}
		b = append(b, w.log.raw(page[i])...)
	}
	b = append(b, `],"nextCursor":`...)
	if start > 0 {
		b = append(b, '"')
		b = w.appendCursor(b, accountID, page[0])
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}'), nil
}

// A cursor is the position of the last event returned (4 bytes) and a MAC
// (8 bytes) over the account id, the position and a key derived from the
// seed, in base64url without padding.
const (
	cursorRaw = 4 + 8
	cursorLen = (cursorRaw*8 + 5) / 6
)

func (w *World) cursorMAC(accountID string, pos uint32) [32]byte {
	var buf [128]byte
	b := append(buf[:0], w.cursorKey[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(accountID)))
	b = append(b, accountID...)
	b = binary.BigEndian.AppendUint32(b, pos)
	return sha256.Sum256(b)
}

func (w *World) appendCursor(b []byte, accountID string, pos uint32) []byte {
	var raw [cursorRaw]byte
	binary.BigEndian.PutUint32(raw[:4], pos)
	mac := w.cursorMAC(accountID, pos)
	copy(raw[4:], mac[:8])
	return base64.RawURLEncoding.AppendEncode(b, raw[:])
}

var cursorEncoding = base64.RawURLEncoding.Strict()

// IssuedCursor says whether cursor is one the world handed to account id
// (a nextCursor of one of its pages).
func (w *World) IssuedCursor(accountID, cursor string) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	_, ok := w.openCursor(accountID, cursor)
	return ok
}

func (w *World) openCursor(accountID, cursor string) (uint32, bool) {
	if len(cursor) != cursorLen {
		return 0, false
	}
	var raw [cursorRaw]byte
	n, err := cursorEncoding.Decode(raw[:], []byte(cursor))
	if err != nil || n != cursorRaw {
		return 0, false
	}
	pos := binary.BigEndian.Uint32(raw[:4])
	mac := w.cursorMAC(accountID, pos)
	if subtle.ConstantTimeCompare(mac[:8], raw[4:]) != 1 || int(pos) >= len(w.log.heads) {
		return 0, false
	}
	return pos, true
}
