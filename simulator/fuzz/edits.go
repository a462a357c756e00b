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
	return &answer{Status: http.StatusOK, Body: jsondoc.Encode(v)}
}

// after changes a served answer: the world's edges on every 200, then,
// on a feed page, the cursor cycle and the step, and keeps the walk's
// pages and the events served.
func (s *Schedule) after(x *exchange, a *answer) {
	if a.Status == http.StatusOK && s.unedited(x, a) {
		return
	}
	obj, ok := s.document(x, a)
	if !ok {
		return
	}
	s.worldEdges(obj)
	if x.op != simulator.OpFeed || !x.feedOK {
		s.finish(x, a, obj)
		return
	}
	p := s.page(x, obj)
	s.lap(x, p, a)
	s.edit(x, p, a)
	p.put(obj)
	s.finish(x, a, obj)
	if p.truncated {
		s.truncate(x, p, a)
		return
	}
	s.remember(x, p)
}

// document is the JSON object of a 200, which the edits change; a step
// that needs one goes back to the steps pending.
func (s *Schedule) document(x *exchange, a *answer) (map[string]any, bool) {
	if a.Status != http.StatusOK {
		if x.cut >= 0 {
			s.say(x, fmt.Sprintf("the answer (%d) was cut after %d%% of its %d bytes and the connection closed", a.Status, x.cut, len(a.Body)))
		}
		s.putBack(x) // the other steps need a 200
		return nil, false
	}
	doc, err := jsondoc.Decode(a.Body)
	obj, isObj := doc.(map[string]any)
	if err != nil || !isObj {
		s.putBack(x)
		return nil, false
	}
	return obj, true
}

// feedPage is a feed page being served: its events and nextCursor, where
// it sits in its walk, and its name in the story.
type feedPage struct {
	events    []any
	next      string
	info      pageInfo
	name      string
	truncated bool // a Truncated step: cut once encoded
}

// page reads the feed page of obj and places it in its walk (the plan's
// cap on the feed applied).
func (s *Schedule) page(x *exchange, obj map[string]any) *feedPage {
	p := &feedPage{info: pageInfo{walk: s.walks + 1, page: 1}}
	p.events, _ = obj["events"].([]any)
	p.next, _ = obj["nextCursor"].(string)
	switch {
	case x.q.Cursor == "":
		s.walks++
	case x.known:
		p.info = x.info
	default:
		p.info = pageInfo{}
	}
	if c := s.plan.World.FeedCap; c >= 0 && p.info.page > 0 && p.info.offset+len(p.events) >= c {
		p.events, p.next = p.events[:max(c-p.info.offset, 0)], ""
	}
	p.name = fmt.Sprintf("page %d", p.info.page)
	return p
}

// put writes the page back into obj.
func (p *feedPage) put(obj map[string]any) {
	obj["events"] = p.events
	obj["nextCursor"] = nil
	if p.next != "" {
		obj["nextCursor"] = p.next
	}
}

// lap serves the cursor cycle again to a client that follows it, up to
// maxLaps times.
func (s *Schedule) lap(x *exchange, p *feedPage, a *answer) {
	if s.cycle == nil || x.q.Cursor != s.cycle.cursor || p.next == "" {
		return
	}
	s.cycle.laps++
	if s.cycle.laps < maxLaps {
		p.next = x.q.Cursor
		a.Breaks = string(Breaks[Cycle])
		s.say(x, fmt.Sprintf("the same page again, its nextCursor the cursor that reached it (lap %d of the cycle of request %d)", s.cycle.laps, s.cycle.from))
	}
}

// edit serves the request's step on its page, or puts the step back when
// the page does not lend itself to it.
func (s *Schedule) edit(x *exchange, p *feedPage, a *answer) {
	st := x.step
	if st == nil {
		return
	}
	e := edits[st.Kind]
	if e == nil {
		return // a step of the contract, served before the request
	}
	if !e(s, x, p, a) {
		s.putBack(x)
		return
	}
	s.mayFail = true
	a.Breaks = string(Breaks[st.Kind])
}

// edits are the breaking steps, each on one feed page; each reports
// whether the page lent itself to it.
var edits = map[Kind]func(s *Schedule, x *exchange, p *feedPage, a *answer) bool{
	OutOfOrder:  (*Schedule).outOfOrder,
	LongPage:    (*Schedule).longPage,
	Repeated:    (*Schedule).repeated,
	Cycle:       (*Schedule).cycleStart,
	UnknownType: (*Schedule).unknownType,
	WrongType:   (*Schedule).wrongType,
	Truncated:   func(_ *Schedule, _ *exchange, p *feedPage, _ *answer) bool { p.truncated = true; return true },
	CursorAtEnd: (*Schedule).cursorAtEnd,
}

func (s *Schedule) outOfOrder(x *exchange, p *feedPage, _ *answer) bool {
	events := p.events
	for i := 0; i+1 < len(events); i++ {
		if createdAt(events[i]) != createdAt(events[i+1]) {
			events[i], events[i+1] = events[i+1], events[i]
			s.say(x, fmt.Sprintf("%s lists event %s (createdAt %d) before event %s (createdAt %d): not newest first (breaks %s)", p.name, id(events[i]), createdAt(events[i]), id(events[i+1]), createdAt(events[i+1]), Breaks[OutOfOrder]))
			return true
		}
	}
	return false
}

func (s *Schedule) longPage(x *exchange, p *feedPage, _ *answer) bool {
	if len(p.events) != x.limit {
		return false
	}
	s.say(x, fmt.Sprintf("%s holds %d events, %d asked (breaks %s)", p.name, len(p.events), x.q.Limit, Breaks[LongPage]))
	return true
}

func (s *Schedule) repeated(x *exchange, p *feedPage, _ *answer) bool {
	p.events = append([]any{x.info.last}, p.events...)
	s.say(x, fmt.Sprintf("%s repeats event %s, the last event of page %d (breaks %s)", p.name, id(x.info.last), p.info.page-1, Breaks[Repeated]))
	return true
}

func (s *Schedule) cycleStart(x *exchange, p *feedPage, _ *answer) bool {
	if p.next == "" {
		return false
	}
	p.next = x.q.Cursor
	s.cycle = &cycle{cursor: x.q.Cursor, from: x.n}
	s.say(x, fmt.Sprintf("%s's nextCursor is the cursor that reached it: a cursor cycle (breaks %s)", p.name, Breaks[Cycle]))
	return true
}

func (s *Schedule) unknownType(x *exchange, p *feedPage, _ *answer) bool {
	if len(p.events) == 0 {
		return false
	}
	e, _ := p.events[x.step.Param%len(p.events)].(map[string]any)
	e["type"] = UnknownEventType
	s.say(x, fmt.Sprintf("%s: event %s has the type %s, none of the eleven (breaks %s)", p.name, id(e), UnknownEventType, Breaks[UnknownType]))
	return true
}

func (s *Schedule) wrongType(x *exchange, p *feedPage, a *answer) bool {
	a.ContentType = "text/plain; charset=utf-8"
	s.say(x, fmt.Sprintf("%s sent as text/plain (breaks %s)", p.name, Breaks[WrongType]))
	return true
}

func (s *Schedule) cursorAtEnd(x *exchange, p *feedPage, _ *answer) bool {
	if p.next != "" || len(s.ends) >= maxRemembered {
		return false
	}
	p.next = "fuzzend" + strconv.Itoa(x.n)
	s.ends[p.next] = x.n
	s.say(x, fmt.Sprintf("%s is the last, but has a nextCursor (breaks %s)", p.name, Breaks[CursorAtEnd]))
	return true
}

// truncate cuts the encoded page: a Truncated step.
func (s *Schedule) truncate(x *exchange, p *feedPage, a *answer) {
	n := len(a.Body) * x.step.Param / 100
	s.say(x, fmt.Sprintf("%s cut to %d of its %d bytes of JSON, sent as a whole answer (breaks %s)", p.name, n, len(a.Body), Breaks[Truncated]))
	a.Body = a.Body[:n]
}

// remember keeps where the page's nextCursor leads in its walk, and the
// events the client was given whole.
func (s *Schedule) remember(x *exchange, p *feedPage) {
	if p.next != "" && p.info.page > 0 {
		if len(s.pages) >= maxRemembered {
			s.pages = map[string]pageInfo{}
		}
		var last any
		if len(p.events) > 0 {
			last = p.events[len(p.events)-1]
		}
		if _, cycled := s.pages[p.next]; !cycled {
			s.pages[p.next] = pageInfo{walk: p.info.walk, page: p.info.page + 1, offset: p.info.offset + len(p.events), last: last}
		}
	}
	if x.cut < 0 {
		for _, e := range p.events {
			if i := id(e); i != "" && !s.idSet[i] {
				s.idSet[i] = true
				s.ids = append(s.ids, i)
			}
		}
	}
}

// finish encodes the document back and tells a Cut.
func (s *Schedule) finish(x *exchange, a *answer, obj map[string]any) {
	a.Body = jsondoc.Encode(obj)
	if x.cut >= 0 {
		s.say(x, fmt.Sprintf("the answer (%d) was cut after %d%% of its %d bytes and the connection closed", a.Status, x.cut, len(a.Body)))
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
