package oracle

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// The status table: for each class of request the statuses the contract
// allows, and for any other the one requirement it breaks, the most
// specific: a valid key refused is AUTH-VALID's, a bad key served the
// rule of its class, a valid body refused the rule of the bound it sits
// at.

// LargeBody is the size past which a tracked-videos body may be refused
// with 413: the largest valid body written plainly (20 ids of 32 characters
// of up to 4 bytes in UTF-8) is under 3 KiB.
const LargeBody = 4 << 10

// status judges the answer's status; false when it is not one the
// contract allows for the request's class.
func (j *judging) status() bool {
	allowed, owner := j.allowed()
	if allowed == nil || slices.Contains(allowed, j.resp.Status) {
		return true
	}
	want := make([]string, len(allowed))
	for i, s := range allowed {
		want[i] = strconv.Itoa(s)
	}
	exp := fmt.Sprintf("status %s (%s)", strings.Join(want, " or "), j.describe())
	j.fail(owner, "", exp, fmt.Sprintf("status %d; body %s", j.resp.Status, j.resp.Excerpt()))
	return false
}

// throttleNo429 is a 503 that asks to come back later: a throttle that is
// no 429.
func (j *judging) throttleNo429() bool {
	return j.resp.Status == http.StatusServiceUnavailable && j.resp.Header.Get("Retry-After") != ""
}

// allowed returns the statuses the class allows (nil: any) and the
// requirement another status breaks.
func (j *judging) allowed() ([]int, catalogue.ID) {
	st := j.resp.Status
	switch j.op {
	case Feed:
		return j.allowedFeed(st)
	case Videos:
		return j.allowedVideos(st)
	case Health:
		return j.allowedHealth()
	case FeedHead:
		return j.allowedFeedHead(st)
	}
	return nil, ""
}

// allowedFeedHead: HEAD is GET without content (RFC 9110 §9.3.2), or a
// method the server does not implement (§9.1: 405 or 501; a router's 404
// or 400): whatever it answers, a bad key is never served and a valid
// one never refused for the key. Whether HEAD counts against the limit
// is open.
func (j *judging) allowedFeedHead(st int) ([]int, catalogue.ID) {
	ok, owner := j.allowedFeed(st)
	ok = append(ok, 400, 404, 405, 429, 501)
	if slices.Contains(ok, st) {
		owner = ""
	}
	return ok, owner
}

func (j *judging) allowedFeed(st int) ([]int, catalogue.ID) {
	open := len(j.q.open) > 0
	var ok []int
	switch {
	case j.cred.bad():
		ok = []int{401}
		if open {
			ok = append(ok, 400) // which error wins is open
		}
		if j.o.m.limiterAcrossKeys(j) {
			ok = append(ok, 429) // a limiter shared across keys: RATE-PER-KEY's to judge
		}
		return ok, j.cred.requirement()
	case j.cred == CredEither:
		ok = []int{200, 401, 429}
	default:
		ok = []int{200, 429}
	}
	if open {
		ok = append(ok, 400)
	}
	if j.q.foreign != nil || j.q.issued != nil && j.q.issued.shared {
		ok = append(ok, 401, 403, 404) // another key's cursor: refused, or a page of the key's own
		if !open {
			ok = append(ok, 400)
		}
	}
	switch {
	case slices.Contains(ok, st):
		return ok, ""
	case st == http.StatusUnauthorized:
		return ok, catalogue.AuthValid
	case st == http.StatusForbidden:
		return ok, catalogue.ProGate
	case st == http.StatusBadRequest:
		return ok, j.q.owner400(j.detailsText())
	case j.throttleNo429():
		return ok, catalogue.RateLimit429
	case open:
		return ok, catalogue.FeedBadParam // a bad parameter is answered 400 or served
	}
	return ok, catalogue.FeedPageSchema
}

func (j *judging) allowedVideos(st int) ([]int, catalogue.ID) {
	vb := j.vb
	var ok []int
	add := func(s ...int) { ok = append(ok, s...) }
	if vb.verdict != valid {
		add(400)
	}
	if !vb.mediaOK {
		add(415) // a media type the contract does not show: HTTP's answer to it conforms too
	}
	if j.req.Framing.Chunked {
		add(411) // RFC 9112 §6.3: a server MAY refuse a body without a Content-Length
	}
	if len(j.req.Body) > LargeBody {
		// RFC 9110 §15.5.14: content larger than the server is willing to
		// process; the contract bounds the ids, not the body's bytes
		add(413)
	}
	switch {
	case j.cred.bad():
		add(401)
		if j.o.m.limiterAcrossKeys(j) {
			add(429)
		}
		return ok, j.cred.requirement()
	case j.cred == CredEither:
		add(401)
	}
	if j.plan == PlanFree {
		add(403, 429)
		// the plan rule is the most specific of a free key's answers, and
		// 401 is a valid key refused there for its plan unless its feed
		// was refused too
		// (or, for another form of the key, when the form the contract
		// shows was answered 403: the form was refused, not the plan)
		if st == http.StatusUnauthorized && (j.o.m.refused[j.token] || j.otherForm() && j.o.m.planAnswer[j.token] == http.StatusForbidden) {
			return ok, catalogue.AuthValid
		}
		return ok, catalogue.ProGate
	}
	add(429)
	if vb.verdict != invalid {
		add(200)
	}
	switch {
	case slices.Contains(ok, st):
		return ok, ""
	case st == http.StatusBadRequest && vb.verdict == valid && vb.restyled && !(len(vb.ids) == schemas.MinVideoIDs && j.o.m.refusedOne):
		// a valid body refused in another form than the plain one: its
		// form's (unless one id was refused in the plain form too)
		return ok, catalogue.VideosBadBody
	case st == http.StatusBadRequest && vb.verdict == valid && len(vb.ids) == schemas.MinVideoIDs && vb.owner == catalogue.VideosIDsMin && !vb.atLen && j.o.m.servedOne:
		// one id refused where one id was served before: the count is
		// kept, this id is refused (each item 1 to 32 characters)
		return ok, catalogue.VideosIDLen
	case st == http.StatusBadRequest && vb.atCount && vb.atLen:
		// two bounds at once: an id of 32 characters refused alone is the
		// length's fault; else the batch's (a body too large for 20 ids)
		if j.o.m.refusedLongest {
			return ok, catalogue.VideosIDLen
		}
		return ok, catalogue.VideosIDsMax
	case st == http.StatusBadRequest && len(vb.ids) == schemas.MinVideoIDs && vb.atLen && j.o.m.refusedOne:
		return ok, catalogue.VideosIDsMin // one id of any length refused: the count's fault
	case st == http.StatusOK || st == http.StatusBadRequest:
		return ok, vb.owner
	case st == http.StatusUnauthorized:
		return ok, catalogue.AuthValid
	case st == http.StatusForbidden:
		return ok, catalogue.ProGate
	case j.throttleNo429():
		return ok, catalogue.RateLimit429
	}
	// A valid request of the Pro key refused with a status the contract
	// does not list (a 5xx, a 417 to Expect, a 404 of a router): the
	// videos were not served. VIDEOS-ENTRY-SCHEMA is the shape of a 200.
	return ok, catalogue.VideosServed
}

func (j *judging) allowedHealth() ([]int, catalogue.ID) {
	ok, owner := j.allowedHealthBody()
	if ok != nil && j.req.Framing.Chunked {
		ok = append(ok, 411) // RFC 9112 §6.3: a server MAY refuse a body without a Content-Length
	}
	return ok, owner
}

func (j *judging) allowedHealthBody() ([]int, catalogue.ID) {
	switch {
	case !j.healthOK:
		return nil, "" // a body other than the usage shown: what health answers is open
	case j.cred == CredNone:
		// whether health takes a key is open (HEALTH-AUTH): a 401 without
		// one conforms; a valid key is then served
		return []int{200, 401}, catalogue.HealthOK
	case j.cred.bad():
		// whether health takes a key, and refuses a bad one, is open
		return []int{200, 400, 401}, catalogue.HealthOK
	case j.cred == CredEither:
		return []int{200, 401, 429}, catalogue.HealthOK
	}
	// a valid key: accepted whether or not health wants one; limited only
	// if the rate limit counts health too (RATE-SCOPE is open)
	return []int{200, 429}, catalogue.HealthOK
}

// otherForm reports a valid key written otherwise than the contract's
// usage shown (Authorization: Bearer <key>): a 401 then refuses the form
// the standards make the same, not the plan.
func (j *judging) otherForm() bool {
	v := j.req.Values("Authorization")
	return len(v) != 1 || v[0] != "Bearer "+j.token
}

// detailsText is the answer's details, encoded, for a search of the
// parameters it names ("" when none).
func (j *judging) detailsText() string {
	d, ok := jsondoc.Get(j.doc(), "/details")
	if !ok {
		return ""
	}
	return string(jsondoc.Encode(d))
}
