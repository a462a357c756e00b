package tcmclient

import "context"

// Feed keeps a copy of an account's feed in step with the API: the first
// Sync walks the whole feed, page by page, until nextCursor is null; a
// later Sync reads the first page again, and the next pages only until it
// meets an event it has. Events that arrive during a walk are above the
// walk's cursor, so the walk misses and repeats nothing, and the next
// Sync finds them on the first page. Each event is kept once, by id.
type Feed struct {
	Client *Client
	Limit  int // events per page (0: MaxPage)

	seen   map[string]bool
	synced bool // a Sync went to the end once
}

// Sync reads what is new and returns it, newest first.
func (f *Feed) Sync(ctx context.Context) ([]Event, error) {
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	limit := f.Limit
	if limit == 0 {
		limit = MaxPage
	}
	var fresh []Event
	cursor := ""
	for {
		p, err := f.Client.Page(ctx, cursor, limit)
		if err != nil {
			return fresh, err
		}
		met := false
		for _, e := range p.Events {
			if f.seen[e.ID] {
				met = true
				continue
			}
			f.seen[e.ID] = true
			fresh = append(fresh, e)
		}
		if p.NextCursor == nil || (f.synced && met) {
			f.synced = true
			return fresh, nil
		}
		cursor = *p.NextCursor
	}
}

// Len is how many events the copy holds.
func (f *Feed) Len() int { return len(f.seen) }
