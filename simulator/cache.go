package simulator

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// answerCache keeps 200 answers (feed pages, tracked-videos bodies) for the
// world's current moment. An answer is a function of the world's state, its
// Now, the account (and its plan) and the request, so it is kept under the
// moment (Now and a count of the changes made through the control API at
// the same Now: a poll, a plan) and dropped whole when the moment moves. A
// client that asks again before the world moves, such as a load test, gets
// the bytes built once; a realtime clock, whose Now moves every
// millisecond, simply misses.
type answerCache struct {
	changes atomic.Uint64 // bumped by every change the clock does not show

	mu     sync.Mutex
	moment cacheMoment
	bytes  int
	byKey  map[string][]byte
}

type cacheMoment struct {
	nowMs   int64
	changes uint64
}

// maxCacheBytes bounds the answers kept for one moment.
const maxCacheBytes = 32 << 20

// Changed invalidates every answer (after PollAll, SetPlan and the like).
func (c *answerCache) Changed() { c.changes.Add(1) }

func (c *answerCache) momentAt(nowMs int64) cacheMoment {
	return cacheMoment{nowMs: nowMs, changes: c.changes.Load()}
}

func (c *answerCache) Get(m cacheMoment, key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.moment != m {
		return nil, false
	}
	b, ok := c.byKey[key]
	return b, ok
}

func (c *answerCache) Put(m cacheMoment, key string, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.moment != m || c.byKey == nil {
		c.moment, c.bytes, c.byKey = m, 0, map[string][]byte{}
	}
	if c.bytes+len(body) > maxCacheBytes {
		return
	}
	c.byKey[key] = body
	c.bytes += len(body)
}

// feedKey names an account's feed request.
func feedKey(accountID, cursor string, limit int) string {
	return "f" + accountID + "\x00" + strconv.Itoa(limit) + "\x00" + cursor
}

// videosKey names an account's tracked-videos request; ids are
// length-prefixed because an id may hold any character.
func videosKey(accountID string, ids []string) string {
	var b strings.Builder
	n := len(accountID) + 2
	for _, id := range ids {
		n += len(id) + 4
	}
	b.Grow(n)
	b.WriteByte('v')
	b.WriteString(accountID)
	for _, id := range ids {
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(len(id)))
		b.WriteByte(':')
		b.WriteString(id)
	}
	return b.String()
}
