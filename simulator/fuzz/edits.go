package fuzz

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/world"
)

// UnknownEventType is the type an unknown-event-type step gives an event.
const UnknownEventType = "video_premiered"

func jsonAnswer(v any) *answer {
	return &answer{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json"}}, body: jsondoc.Encode(v)}
}

// after changes a served answer: the world's edges on every 200, then
// the step, and keeps the walk's pages and the events served.
func (s *Schedule) after(x *exchange, a *answer) {
	if a.status != http.StatusOK {
		if x.cut >= 0 {
			s.say(x, fmt.Sprintf("the answer (%d) was cut after %d%% of its %d bytes and the connection closed", a.status, x.cut, len(a.body)))
		}
		s.putBack(x) // the other steps need a 200
		return
	}
	if s.unedited(x, a) {
		return
	}
	doc, err := jsondoc.Decode(a.body)
	obj, isObj := doc.(map[string]any)
	if err != nil || !isObj {
		s.putBack(x)
		return
	}
	s.worldEdges(obj)
	if x.op != simulator.OpFeed || !x.feedOK {
		s.finish(x, a, obj)
		return
	}
	events, _ := obj["events"].([]any)
	next, _ := obj["nextCursor"].(string)
	info := pageInfo{walk: s.walks + 1, page: 1}
	switch {
	case x.q.Cursor == "":
		s.walks++
	case x.known:
		info = x.info
	default:
		info = pageInfo{}
	}
	if c := s.plan.World.FeedCap; c >= 0 && info.page > 0 && info.offset+len(events) >= c {
		events, next = events[:max(c-info.offset, 0)], ""
	}
	page := fmt.Sprintf("page %d", info.page)
	if s.cycle != nil && x.q.Cursor == s.cycle.cursor && next != "" {
		s.cycle.laps++
		if s.cycle.laps < maxLaps {
			next = x.q.Cursor
			s.say(x, fmt.Sprintf("the same page again, its nextCursor the cursor that reached it (lap %d of the cycle of request %d)", s.cycle.laps, s.cycle.from))
		}
		if s.cycle.laps == CycleLaps && !s.cycle.reported {
			s.cycle.reported = true
			s.findings = append(s.findings, fmt.Sprintf("cursor cycle followed: the nextCursor of request %d was the cursor that reached that page, and the client followed it %d times (request %d): a walk must stop at a cursor it has already followed", s.cycle.from, CycleLaps, x.n))
		}
	}
	truncated := false
	if st := x.step; st != nil {
		applied := true
		switch st.Kind {
		case OutOfOrder:
			i := -1
			for j := 0; j+1 < len(events) && i < 0; j++ {
				if createdAt(events[j]) != createdAt(events[j+1]) {
					i = j
				}
			}
			if applied = i >= 0; applied {
				events[i], events[i+1] = events[i+1], events[i]
				s.say(x, fmt.Sprintf("%s lists event %s (createdAt %d) before event %s (createdAt %d): not newest first (breaks %s)", page, id(events[i]), createdAt(events[i]), id(events[i+1]), createdAt(events[i+1]), Breaks[st.Kind]))
			}
		case LongPage:
			if applied = len(events) == x.limit; applied {
				s.say(x, fmt.Sprintf("%s holds %d events, %d asked (breaks %s)", page, len(events), x.q.Limit, Breaks[st.Kind]))
			}
		case Repeated:
			events = append([]any{x.info.last}, events...)
			s.say(x, fmt.Sprintf("%s repeats event %s, the last event of page %d (breaks %s)", page, id(x.info.last), info.page-1, Breaks[st.Kind]))
		case Cycle:
			if applied = next != ""; applied {
				next = x.q.Cursor
				s.cycle = &cycle{cursor: x.q.Cursor, from: x.n}
				s.say(x, fmt.Sprintf("%s's nextCursor is the cursor that reached it: a cursor cycle (breaks %s)", page, Breaks[st.Kind]))
			}
		case UnknownType:
			if applied = len(events) > 0; applied {
				e, _ := events[st.Param%len(events)].(map[string]any)
				e["type"] = UnknownEventType
				s.say(x, fmt.Sprintf("%s: event %s has the type %s, none of the eleven (breaks %s)", page, id(e), UnknownEventType, Breaks[st.Kind]))
			}
		case WrongType:
			a.header.Set("Content-Type", "text/plain; charset=utf-8")
			s.say(x, fmt.Sprintf("%s sent as text/plain (breaks %s)", page, Breaks[st.Kind]))
		case Truncated:
			truncated = true
		case CursorAtEnd:
			if applied = next == "" && len(s.ends) < maxRemembered; applied {
				next = "fuzzend" + strconv.Itoa(x.n)
				s.ends[next] = x.n
				s.say(x, fmt.Sprintf("%s is the last, but has a nextCursor (breaks %s)", page, Breaks[st.Kind]))
			}
		}
		if !applied {
			s.putBack(x)
		} else if _, breaks := Breaks[st.Kind]; breaks {
			s.mayFail = true
		}
	}
	obj["events"] = events
	obj["nextCursor"] = nil
	if next != "" {
		obj["nextCursor"] = next
	}
	s.finish(x, a, obj)
	if truncated {
		n := len(a.body) * x.step.Param / 100
		s.say(x, fmt.Sprintf("%s cut to %d of its %d bytes of JSON, sent as a whole answer (breaks %s)", page, n, len(a.body), Breaks[x.step.Kind]))
		a.body = a.body[:n]
		s.mayFail = true
		return
	}
	if next != "" && info.page > 0 {
		if len(s.pages) >= maxRemembered {
			s.pages = map[string]pageInfo{}
		}
		var last any
		if len(events) > 0 {
			last = events[len(events)-1]
		}
		if _, cycled := s.pages[next]; !cycled {
			s.pages[next] = pageInfo{walk: info.walk, page: info.page + 1, offset: info.offset + len(events), last: last}
		}
	}
	if x.cut < 0 {
		for _, e := range events {
			if i := id(e); i != "" && !s.idSet[i] {
				s.idSet[i] = true
				s.ids = append(s.ids, i)
			}
		}
	}
}

// finish encodes the document back and tells a Cut.
func (s *Schedule) finish(x *exchange, a *answer, obj map[string]any) {
	a.body = jsondoc.Encode(obj)
	if x.cut >= 0 {
		s.say(x, fmt.Sprintf("the answer (%d) was cut after %d%% of its %d bytes and the connection closed", a.status, x.cut, len(a.body)))
	}
}

// putBack returns a step that could not be served on this request to
// the steps pending, in its place.
func (s *Schedule) putBack(x *exchange) {
	st := x.step
	if st == nil {
		return
	}
	switch st.Kind {
	case Throttle, ServerErr, Drop, Slow, Cut, Regenerate, HeadEvents:
		return // served whatever the answer
	}
	i, _ := slices.BinarySearchFunc(s.pending, st.At, func(p Step, at int) int { return p.At - at })
	s.pending = slices.Insert(s.pending, i, *st)
	x.step = nil
}

// worldEdges gives every event and count the world's edges of the plan:
// createdAt rounded down, counts at 0, null or 2^53-1.
// Both depend only on the event or the video, so every answer shows the
// same values for the same thing.
func (s *Schedule) worldEdges(doc any) {
	w := s.plan.World
	if w.Ties <= 0 && !w.EdgeCounts {
		return
	}
	var visit func(v any, owner string)
	visit = func(v any, owner string) {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				visit(e, owner)
			}
		case map[string]any:
			if idv, ok := v["id"].(string); ok && v["type"] != nil {
				owner = idv
				if tie := w.Ties.Milliseconds(); tie > 0 {
					if ms, ok := v["createdAt"].(json.Number); ok {
						if n, err := ms.Int64(); err == nil {
							v["createdAt"] = json.Number(strconv.FormatInt(n-n%tie, 10))
						}
					}
				}
			} else if pid, ok := v["platformVideoId"].(string); ok && owner == "" {
				owner = pid
			}
			if w.EdgeCounts {
				sample, _ := v["createdAt"].(json.Number)
				for _, f := range []string{"viewCount", "likeCount", "commentCount", "oldSubscriberCount", "newSubscriberCount"} {
					if _, has := v[f]; has {
						if e, ok := s.edgeCount(owner+"/"+string(sample)+"/"+f, f != "newSubscriberCount"); ok {
							v[f] = e
						}
					}
				}
			}
			for k, c := range v {
				if k != "createdAt" {
					visit(c, owner)
				}
			}
		}
	}
	visit(doc, "")
}

// edgeCount decides a count from what it counts: half the time none, else
// 0, 2^53-1 or (when allowed) null.
func (s *Schedule) edgeCount(what string, nullable bool) (any, bool) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", s.plan.World.Seed, what)
	switch v := h.Sum64() % 6; {
	case v < 3:
		return nil, false
	case v == 3:
		return json.Number("0"), true
	case v == 4 || !nullable:
		return json.Number(strconv.FormatInt(world.MaxCount, 10)), true
	}
	return nil, true
}

func id(e any) string {
	m, _ := e.(map[string]any)
	s, _ := m["id"].(string)
	return s
}

func createdAt(e any) int64 {
	m, _ := e.(map[string]any)
	n, _ := m["createdAt"].(json.Number)
	v, _ := n.Int64()
	return v
}
