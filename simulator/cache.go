package simulator

import (
	"strconv"
	"strings"
	"sync"
)

// answerCache keeps 200 answers for one moment of the world, and drops
// them whole when the moment moves. What a moment is depends on the
// answer (the caller says): a feed page is a function of the event log and
// the accounts, so its moment is the log's length and a count of the
// control API's changes (a plan, an account); a tracked-videos answer also
// depends on the world's Now (stat windows), so its moment is Now and that
// count. A first feed page therefore stays cached in a live world until an
// event is recorded, and a page asked for with a cursor, which a new event
// does not change, until the control API changes something (its moment is
// that count alone: state.cursorMoment); a tracked-videos answer in a live
// world never would, and is not cached there (see Server.answer).
type answerCache struct {
	// evict: a full cache drops answers it holds (any) to keep a new
	// one, rather than keep no more.
	evict bool
	// room is the bytes it may hold (nil: maxCacheBytes).
	room   func() int
	mu     sync.Mutex
	moment cacheMoment
	bytes  int
	byKey  map[string][]byte
}

// cacheMoment is a moment of the world, as the cache's caller defines it.
type cacheMoment struct {
	version int64  // the log's length, or Now in ms
	changes uint64 // state.changes
}

// maxCacheBytes bounds the answers kept for one moment, unless the
// cache says otherwise (room).
const maxCacheBytes = 32 << 20

func (c *answerCache) limit() int {
	if c.room == nil {
		return maxCacheBytes
	}
	return c.room()
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

// hasRoom says whether an answer of moment m would be kept.
func (c *answerCache) hasRoom(m cacheMoment) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.moment != m || c.evict || c.bytes < c.limit()-maxPooledAnswer
}

func (c *answerCache) Put(m cacheMoment, key string, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.moment != m || c.byKey == nil {
		c.moment, c.bytes, c.byKey = m, 0, map[string][]byte{}
	}
	limit := c.limit()
	if len(body) > limit {
		return
	}
	for k, b := range c.byKey { // in no order: any answers make room
		if c.bytes+len(body) <= limit || !c.evict {
			break
		}
		delete(c.byKey, k)
		c.bytes -= len(b)
	}
	if c.bytes+len(body) > limit {
		return
	}
	if old, ok := c.byKey[key]; ok {
		c.bytes -= len(old)
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
