package client

import (
	"encoding/json"
	"net/http"

	"github.com/tcmkit/tcmkit/schemas"
)

// maxHanded bounds the cursors remembered: past it the client forgets.
const maxHanded = 1 << 14

// noteCursor remembers which key a feed page's nextCursor was first
// handed to. Call without c.mu held.
func (c *Client) noteCursor(req Request, status int, raw []byte) {
	if status != http.StatusOK || req.Path != schemas.PathFeed || req.Auth == "" {
		return
	}
	var page struct {
		NextCursor *string `json:"nextCursor"`
	}
	if json.Unmarshal(raw, &page) != nil || page.NextCursor == nil || *page.NextCursor == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handed == nil || len(c.handed) >= maxHanded {
		c.handed = map[string]string{}
	}
	if _, ok := c.handed[*page.NextCursor]; !ok {
		c.handed[*page.NextCursor] = req.Auth
	}
}

// HandedTo is the Authorization value a feed page first handed cursor to,
// "" when the client saw no page hand it out (or forgot): whose cursor it
// is, for a suite that asks why a key's cursor was refused.
func (c *Client) HandedTo(cursor string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handed[cursor]
}
