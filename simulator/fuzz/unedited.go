package fuzz

import (
	"bytes"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// unedited keeps the books of a 200 answer that the schedule leaves as it
// is (no step on it, no edge of the world to give it, no cap or cycle to
// apply, not cut) and reports whether it did: such an answer is served as
// the simulator wrote it, and only its cursor and event ids are read,
// instead of decoding it whole and encoding it again, which was most of a
// fuzz input's time. Otherwise after edits the answer.
func (s *Schedule) unedited(x *exchange, a *answer) bool {
	w := s.plan.World
	if x.step != nil || x.cut >= 0 || w.Ties > 0 || w.EdgeCounts {
		return false
	}
	if x.op != simulator.OpFeed || !x.feedOK {
		return true
	}
	if w.FeedCap >= 0 || s.cycle != nil && x.q.Cursor == s.cycle.cursor {
		return false
	}
	ids, lastEvent, next, ok := pageBooks(a.Body)
	if !ok {
		return false
	}
	info := pageInfo{walk: s.walks + 1, page: 1}
	switch {
	case x.q.Cursor == "":
		s.walks++
	case x.known:
		info = x.info
	default:
		info = pageInfo{}
	}
	if next != "" && info.page > 0 {
		if len(s.pages) >= maxRemembered {
			s.pages = map[string]pageInfo{}
		}
		var last any
		if lastEvent != nil {
			last, _ = jsondoc.Decode(lastEvent)
		}
		if _, cycled := s.pages[next]; !cycled {
			s.pages[next] = pageInfo{walk: info.walk, page: info.page + 1, offset: info.offset + len(ids), last: last}
		}
	}
	for _, i := range ids {
		if i != "" && !s.idSet[i] {
			s.idSet[i] = true
			s.ids = append(s.ids, i)
		}
	}
	return true
}

// pageBooks reads what the books need of a feed page written as the
// simulator writes it, {"events":[{"id":"…",…},…],"nextCursor":…},
// without decoding it: the ids of its events, its last event and its
// cursor. An event is an object whose first member is its id, after the
// array's [ or a comma (a channel ref follows a colon; inside a JSON
// string the quotes would be escaped). ok is false for any other shape,
// which is then decoded whole.
func pageBooks(body []byte) (ids []string, lastEvent []byte, next string, ok bool) {
	const head, tail, start = `{"events":[`, `],"nextCursor":`, `{"id":"`
	end := bytes.LastIndex(body, []byte(tail))
	if !bytes.HasPrefix(body, []byte(head)) || end < len(head)-1 || body[len(body)-1] != '}' {
		return nil, nil, "", false
	}
	switch value := body[end+len(tail) : len(body)-1]; {
	case string(value) == "null":
	case len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' && bytes.IndexAny(value[1:len(value)-1], "\\\"") < 0:
		next = string(value[1 : len(value)-1])
	default:
		return nil, nil, "", false
	}
	events := body[len(head)-1 : end] // from the [
	if len(events) == 1 {
		return []string{}, nil, next, true
	}
	last := -1
	for i := 0; ; {
		k := bytes.Index(events[i:], []byte(start))
		if k < 0 {
			break
		}
		i += k
		if c := events[i-1]; c == '[' || c == ',' {
			id := events[i+len(start):]
			q := bytes.IndexByte(id, '"')
			if q < 0 || bytes.IndexByte(id[:q], '\\') >= 0 {
				return nil, nil, "", false
			}
			ids, last = append(ids, string(id[:q])), i
		}
		i += len(start)
	}
	if last < 0 {
		return nil, nil, "", false
	}
	return ids, events[last:], next, true
}
