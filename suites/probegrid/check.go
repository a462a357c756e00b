package probegrid

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// The oracles of the generated probes. What an answer's status, headers
// and body must be is the contract oracle's (package oracle), which judges
// every exchange, a probe's too: a probe spec fails with the problems of its
// own requirement it found there, and so are the rules of a chain of pages
// (each event once, a handed-out cursor honoured, no empty end). What is
// left here is what a probe's scenario adds beyond the answers the oracle
// saw before them: tenants, the partition of ids against the feed. The
// limiter's windows are the oracle's too: a rate sequence tells it what it
// knows of its keys' windows (Host.Own), and its check only blocks. A first page or a long walk against the role's whole
// walk is the oracle's too (a later whole walk holds every event of an
// earlier one: the lanes make the role's whole walk first).
// Each returns the problems, or why the probe could not be judged.

func (pr *prober) check(ctx context.Context, p probe.Probe, r *probeRun) ([]string, string) {
	switch p.Oracle {
	case probe.OracleLists:
		// what judges the pages' content needs a page
		if len(ok200(r.judged)) == 0 && len(r.judged) > 0 && r.judged[len(r.judged)-1].Status == http.StatusTooManyRequests {
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
		return pr.h.Tenant(ctx, p, r.context, r.judged)
	case probe.OracleLists:
		return pr.checkLists(ctx, p, r)
	case probe.OracleRate:
		return r.rate.check(p.Requirement)
	}
	return nil, "no oracle " + string(p.Oracle)
}

// ok200 are the answers with status 200.
func ok200(resps []*client.Response) []*client.Response {
	return slices.DeleteFunc(slices.Clone(resps), func(r *client.Response) bool { return r.Status != http.StatusOK })
}

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

// checkLists holds what the lists' probes need to be judged, and sends
// what VIDEOS-SERVED's asks besides its sequence: tracked videos for a
// video the feed showed. Whether an id comes back in the right list is the
// contract oracle's, for every answer: a video the key's feed showed
// listed missing (VIDEOS-SERVED), an id the probes invented or a video of
// no channel the account tracks served (VIDEOS-MISSING), a video of the
// other account's channel served (VIDEOS-TENANT), an id in neither list or
// in both (VIDEOS-PARTITION).
func (pr *prober) checkLists(ctx context.Context, p probe.Probe, r *probeRun) ([]string, string) {
	h := pr.h
	if p.Requirement != catalogue.VideosServed {
		return nil, ""
	}
	if p.Shape == probe.BothOps {
		// the feed page, then tracked videos for its first video
		if len(r.judged) < 2 {
			return nil, "the sequence was cut short"
		}
		if len(h.VideoIDsOf(r.judged[0])) == 0 {
			return nil, "the first page shows no video"
		}
		return nil, ""
	}
	ids := h.KnownVideoIDs(ctx, 1)
	if len(ids) == 0 {
		return nil, "the feed shows no video to ask for"
	}
	h.Fetch(ctx, h.VideosRequest(ids, pr.keys().Pro))
	return nil, ""
}
