package client

// Known reports whether an equal request was answered already (Cached
// returns that answer without sending it again): a plan of requests counts
// it as free.
func (c *Client) Known(req Request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.cache[req.key()]
	if !ok {
		return false
	}
	// an entry being filled is sent already; a failed one is kept too
	return e != nil
}
