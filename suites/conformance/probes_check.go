package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// The oracles of the generated probes. What an answer's status, headers
// and body must be is the contract oracle's (package oracle), which judges
// every exchange, a probe's too: a probe spec fails with the problems of its
// own requirement it found there, and so are the rules of a chain of pages
// (each event once, a handed-out cursor honoured, no empty end). What is
// left here is what a probe's scenario adds beyond the answers the oracle
// saw before them: tenants, the partition of ids against the feed, the
// limiter's windows. A first page or a long walk against the role's whole
// walk is the oracle's too (a later whole walk holds every event of an
// earlier one: the lanes make the role's whole walk first).
// Each returns the problems, or why the probe could not be judged.

func (pr *prober) check(ctx context.Context, p probe.Probe, r *probeRun) ([]string, string) {
	switch p.Oracle {
	case probe.OracleLists:
		// what judges the pages' content needs a page
		if len(ok200(r.judged)) == 0 && len(r.judged) > 0 && limited(r.judged[len(r.judged)-1]) {
			return nil, fmt.Sprintf("%s answered 429: the key's window was full", r.judged[len(r.judged)-1].Request)
		}
	}
	switch p.Oracle {
	case probe.OracleAuth, probe.OracleInput, probe.OracleErrorBody, probe.OracleContentType, probe.OracleSchema, probe.OracleOrder, probe.OracleHealth:
		return nil, "" // one answer's rules: the contract oracle's
	case probe.OraclePageSize:
		return nil, "" // a page against the role's whole walk: the contract oracle's (checkWalk)
	case probe.OracleWalk:
		return pr.checkWalk(p, r)
	case probe.OracleTenant:
		return pr.checkTenant(ctx, p, r)
	case probe.OracleLists:
		return pr.checkLists(ctx, p, r)
	case probe.OracleRate:
		return r.rate.check(p.Requirement)
	}
	return nil, "no oracle " + string(p.Oracle)
}

// probePage reads a feed answer as a walk does, bounded: a page of more
// events than maxPageEvents is not read (a page-size oracle says so), so
// that a hostile target's pages of 100,000 events cost no memory here.
func probePage(resp *client.Response) (walkPage, bool) {
	doc, err := resp.JSON()
	if err != nil || len(jsondoc.Items(doc, "/events")) > maxPageEvents {
		return walkPage{}, false
	}
	page, err := readPage(resp, 0)
	return page, err == nil
}

// cursorRefused says why a page cannot be judged when its cursor, one the
// target handed out, was refused (a 400 whose details name the cursor and
// not the limit): FEED-CURSOR-WALK's rule, not the page's; "" otherwise.
func cursorRefused(resp *client.Response) string {
	q, _ := url.ParseQuery(resp.Request.Query)
	if resp.Status != http.StatusBadRequest || q.Get("cursor") == "" || !detailsMention(resp, "cursor") || detailsMention(resp, "limit") {
		return ""
	}
	return fmt.Sprintf("%s answered 400 to a cursor the target handed out (judged by FEED-CURSOR-WALK): no page to judge", resp.Request)
}

// elsewhere says why an unexpected answer is no finding of requirement
// own: its status breaks another rule (statusCause), or the target asks
// to be left alone, or it refused a cursor it handed out; "" when the
// answer is own's to judge.
func (s *Session) elsewhere(resp *client.Response, own catalogue.ID) string {
	if resp.Status == http.StatusServiceUnavailable && own == catalogue.RateLimit429 {
		return "" // a throttle that is no 429 is the limit's own finding
	}
	id, block := s.statusCause(resp)
	switch {
	case block != "":
		return block
	case id != "" && id != own:
		return fmt.Sprintf("%s answered %d, which breaks %s: no answer to judge", resp.Request, resp.Status, id)
	}
	return cursorRefused(resp)
}

// ok200 are the answers with status 200.
func ok200(resps []*client.Response) []*client.Response {
	return slices.DeleteFunc(slices.Clone(resps), func(r *client.Response) bool { return r.Status != http.StatusOK })
}

// limited reports whether a valid key's answer is a 429 the client could
// not wait out: the rate-limit probes judge those.
func limited(resp *client.Response) bool { return resp.Status == http.StatusTooManyRequests }

// checkWalk holds what a walk's probe needs to be judged: on a live head,
// the page after the first. Every rule of a chain of pages is the contract
// oracle's: each event once, a handed-out cursor honoured, no empty end,
// and a whole walk (a long walk at limit=1, a first page with a null
// nextCursor) that holds every event an earlier whole walk held below its
// head (the role's whole walk, which the lanes make first: walkedBy), on
// the size rule of its last page when that page was short.
func (pr *prober) checkWalk(p probe.Probe, r *probeRun) ([]string, string) {
	if p.Shape == probe.LiveHead && len(r.judged) < 2 {
		return nil, "the first page had no nextCursor to follow once new events arrived"
	}
	return nil, ""
}

func (pr *prober) checkTenant(ctx context.Context, p probe.Probe, r *probeRun) ([]string, string) {
	s := pr.s
	if s.tg.Free == "" {
		return nil, needs("free-key")
	}
	pro, free := s.fullWalk(ctx), s.freeWalk(ctx)
	if !pro.Complete || !free.Complete {
		return nil, fmt.Sprintf("a walk did not reach the end of its feed (raise --max-pages=%d): what an account tracks is learnt from its whole feed", s.cfg.MaxPages)
	}
	var out []string
	if p.Requirement == catalogue.VideosTenant {
		ids, channels := foreignVideos(free, pro, schemas.MaxVideoIDs-1)
		if len(ids) == 0 {
			return nil, "no video of a channel only the free account tracks"
		}
		resp := s.fetch(ctx, foreignVideosRequest(ids, s.tg.Pro))
		if resp.Status != http.StatusOK {
			return nil, fmt.Sprintf("%s answered %d", resp.Request, resp.Status)
		}
		return servedForeign(resp, ids, channels)
	}
	// A page of the Pro key's, read with the free key: only an event shown
	// to be the Pro account's alone is a leak (owner.foreign).
	// The pages the sequence read with the free key before (a cursor
	// page's lead) are the free key's answers too: a leak there is proof
	// enough, and the cursor page it handed out may never come.
	o := ownerOf(free, pro)
	var mine []*client.Response
	for _, resp := range r.context {
		if resp.Request.Auth == client.Bearer(s.tg.Free) {
			mine = append(mine, resp)
		}
	}
	for _, resp := range ok200(append(mine, r.judged...)) {
		page := pr.facts.of(resp).page
		for i, e := range page.Events {
			if o.foreign(e.ID, e.Channel, e.CreatedAt) {
				out = append(out, fmt.Sprintf("%s: /events/%d (id %q, channel %q) is an event of the Pro account's feed, of a channel the free account's whole feed never shows, served to the free key", resp.Request, i, e.ID, e.Channel))
			}
		}
	}
	return out, ""
}

func (pr *prober) checkLists(ctx context.Context, p probe.Probe, r *probeRun) ([]string, string) {
	s := pr.s
	var out []string
	if p.Requirement == catalogue.VideosServed {
		if p.Shape == probe.BothOps {
			// the feed page, then tracked videos for its first video
			if len(r.judged) < 2 {
				return nil, "the sequence was cut short"
			}
			ids := videoIDsOf(r.judged[0])
			if len(ids) == 0 {
				return nil, "the first page shows no video"
			}
			if resp := r.judged[1]; resp.Status == http.StatusOK && listed(resp, ids[0]) != "videos" {
				out = append(out, fmt.Sprintf("%s: %q, seen on the feed page just read, is not a VideoEntry", resp.Request, ids[0]))
			}
			return out, ""
		}
		ids := s.knownVideoIDs(ctx, 1)
		if len(ids) == 0 {
			return nil, "the feed shows no video to ask for"
		}
		resp := s.fetch(ctx, videosRequest(ids, s.tg.Pro))
		if resp.Status == http.StatusOK && listed(resp, ids[0]) != "videos" {
			out = append(out, fmt.Sprintf("%s: %q, seen in the feed, is not a VideoEntry", resp.Request, ids[0]))
		}
		return out, ""
	}
	ids := p.Input.IDs
	if p.Input.FromFeed {
		ids = r.ids
	}
	for _, resp := range ok200(r.judged) {
		switch {
		case p.Requirement == catalogue.VideosPartition:
			// one answer's rule: the contract oracle's
		case p.Requirement == catalogue.VideosMissing && p.Input.FromFeed:
			ps, block := pr.shapedServed(ctx, resp, ids)
			if block != "" {
				return nil, block
			}
			out = append(out, ps...)
		case p.Requirement == catalogue.VideosMissing:
			for _, id := range ids {
				if listed(resp, id) == "videos" {
					out = append(out, fmt.Sprintf("%s: %q, an id that names no video, is served as a VideoEntry", resp.Request, jsondoc.Excerpt(id, 40)))
				}
			}
		}
	}
	return out, ""
}
