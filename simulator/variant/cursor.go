package variant

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"strconv"
	"strings"
	"sync"
)

// Cursors in the draw's format: opaque strings of other shapes and lengths
// that stand for the server's cursor. Every format but short is a
// reversible encoding (no state, a cursor is good for as long as the
// server's is); short numbers the cursors it hands out, and keeps the last
// maxShort of them.

const maxShort = 1 << 20

type cursors struct {
	format string
	secret string // makes a long cursor's check value the draw's own

	mu    sync.Mutex
	short map[string]string // short cursor → server cursor
	back  map[string]string // server cursor → short cursor
	order []string          // short cursors, oldest first
	next  uint64
}

func newCursors(d Draw) *cursors {
	return &cursors{format: d.Cursor, secret: strconv.FormatUint(d.N, 36)}
}

// encode is the cursor the client gets for the server's c.
func (c *cursors) encode(s string) string {
	switch c.format {
	case "hex":
		return strings.ToUpper(hex.EncodeToString([]byte(s)))
	case "base64":
		// standard alphabet, padded: + / = need escaping in a query
		return base64.StdEncoding.EncodeToString([]byte("v1:" + s))
	case "decimal":
		return new(big.Int).SetBytes(append([]byte{1}, s...)).String()
	case "long":
		return s + "." + c.check(s)
	case "prefixed":
		return "page_" + reverse(s)
	case "unicode":
		return "➜ page " + s + " · ünïcode"
	case "short":
		return c.shortFor(s)
	}
	return s
}

// decode is the server's cursor for the client's, ok false when the
// client's is none of the draw's.
func (c *cursors) decode(s string) (string, bool) {
	switch c.format {
	case "hex":
		raw, err := hex.DecodeString(s)
		return string(raw), err == nil && len(raw) > 0 && s == strings.ToUpper(s)
	case "base64":
		raw, err := base64.StdEncoding.DecodeString(s)
		v, ok := strings.CutPrefix(string(raw), "v1:")
		return v, err == nil && ok && v != ""
	case "decimal":
		n, ok := new(big.Int).SetString(s, 10)
		if !ok || n.Sign() <= 0 || n.String() != s {
			return "", false
		}
		raw := n.Bytes()
		return string(raw[1:]), len(raw) > 1 && raw[0] == 1
	case "long":
		v, sum, ok := strings.Cut(s, ".")
		return v, ok && v != "" && sum == c.check(v)
	case "prefixed":
		v, ok := strings.CutPrefix(s, "page_")
		return reverse(v), ok && v != ""
	case "unicode":
		v, ok := strings.CutPrefix(s, "➜ page ")
		v, ok2 := strings.CutSuffix(v, " · ünïcode")
		return v, ok && ok2 && v != ""
	case "short":
		c.mu.Lock()
		defer c.mu.Unlock()
		v, ok := c.short[s]
		return v, ok
	}
	return s, s != ""
}

// check is 192 hex digits that only the draw makes for s.
func (c *cursors) check(s string) string {
	var out []byte
	for i := range 3 {
		sum := sha256.Sum256([]byte(c.secret + strconv.Itoa(i) + s))
		out = append(out, sum[:]...)
	}
	return hex.EncodeToString(out)
}

func (c *cursors) shortFor(s string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.back[s]; ok {
		return v
	}
	if c.short == nil {
		c.short, c.back = map[string]string{}, map[string]string{}
	}
	if len(c.order) >= maxShort {
		old := c.order[0]
		c.order = c.order[1:]
		delete(c.back, c.short[old])
		delete(c.short, old)
	}
	c.next++
	v := "p" + strconv.FormatUint(c.next, 36)
	c.short[v], c.back[s] = s, v
	c.order = append(c.order, v)
	return v
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}
