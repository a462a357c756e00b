package oracle

import (
	"bytes"
	"encoding/json"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// The class of a request is what the contract's rules depend on: the
// operation, the credential, the query's or the body's validity. It is
// read from the request alone (and the cursors the target handed out), so
// an explored request is judged by the same table as a spec's.

// Op is the operation a request asks for.
type Op string

const (
	Feed   Op = "feed"
	Videos Op = "videos"
	Health Op = "health"
	// FeedHead is HEAD of the feed's path: RFC 9110 §9.3.2 makes it GET
	// without content, and §9.1 lets a server not implement it (405, 501).
	// It says nothing of a page, and nothing of the limiter (whether it
	// counts HEAD is open).
	FeedHead Op = "feed (HEAD)"
	// Other is any other method or path: the contract says nothing of it,
	// beyond what a key grants.
	Other Op = "other"
)

// opOf names the operation of a method and path: exactly the contract's.
func opOf(method, path string) Op {
	switch {
	case method == http.MethodGet && path == schemas.PathFeed:
		return Feed
	case method == http.MethodPost && path == schemas.PathVideos:
		return Videos
	case method == http.MethodPost && path == schemas.PathHealth:
		return Health
	case method == http.MethodHead && path == schemas.PathFeed:
		return FeedHead
	}
	return Other
}

// Cred is the class of the credential a request carries.
type Cred string

const (
	CredNone      Cred = "none"      // no Authorization header (a key elsewhere is no credential)
	CredMalformed Cred = "malformed" // not Bearer, an empty token, a token without the prefix
	CredUnknown   Cred = "unknown"   // <prefix>_… that is no account's key
	CredRevoked   Cred = "revoked"
	CredValid     Cred = "valid"
	// CredEither is a valid key in a form HTTP's grammar or the contract
	// leaves open (the scheme in another case, more spaces, two headers):
	// accepted or refused with 401, both conform.
	CredEither Cred = "either"
)

// bad reports whether the credential must be refused with 401.
func (c Cred) bad() bool { return c != CredValid && c != CredEither }

// requirement is the rule a bad credential's 401 belongs to.
func (c Cred) requirement() catalogue.ID {
	switch c {
	case CredNone:
		return catalogue.AuthMissing
	case CredMalformed:
		return catalogue.AuthMalformed
	case CredUnknown:
		return catalogue.AuthUnknown
	case CredRevoked:
		return catalogue.AuthRevoked
	}
	return catalogue.AuthValid
}

// says names the credential for a message.
func (c Cred) says() string {
	return map[Cred]string{
		CredNone:      "no Authorization header: a missing key",
		CredMalformed: "a malformed key (not Bearer <KEY_PREFIX>_<random>)",
		CredUnknown:   "a well-formed key of no account",
		CredRevoked:   "a revoked key",
		CredValid:     "a valid key",
		CredEither:    "a valid key in a form the contract leaves open",
	}[c]
}

// Plan is a valid key's plan.
type Plan string

const (
	PlanPro  Plan = "pro"
	PlanFree Plan = "free"
)

// credential classes a request's Authorization headers. token is the key
// of a valid class.
func (k *Keys) credential(req client.Request) (Cred, string) {
	vals := req.Values("Authorization")
	switch len(vals) {
	case 0:
		return CredNone, ""
	case 1:
	default:
		// Authorization is a singleton field: what a server does with two
		// is HTTP's question, not the contract's; a valid key among them
		// may be taken.
		for _, v := range vals {
			if c, tok := k.credential(client.Request{Auth: v}); c == CredValid || c == CredEither {
				return CredEither, tok
			}
		}
		return CredMalformed, ""
	}
	// RFC 9112 §5.1: the whitespace around a field line's value is no
	// part of the value (a parser MUST exclude it).
	v := strings.Trim(vals[0], " \t")
	if v == "" {
		return CredMalformed, ""
	}
	// RFC 9110 §11.1 and RFC 6750 §2.1 (whose "Bearer" is case-insensitive
	// by RFC 5234 §2.3): the scheme's case means nothing, so bearer and
	// BEARER carry the key as Bearer does. The frameworks most servers
	// stand on fold it too.
	scheme, rest, _ := strings.Cut(v, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return CredMalformed, "" // another scheme, a tab after it, or a bare key
	}
	token := strings.TrimLeft(rest, " ")
	// RFC 6750 §2.1 allows 1*SP before the token, but common stacks
	// (passport-http-bearer, FastAPI's HTTPBearer, Spring's resolver)
	// refuse more than one: left open.
	exact := rest == token
	if token == "" || strings.ContainsAny(token, " \t") {
		return CredMalformed, "" // no token, or more than one
	}
	c := k.token(token)
	if c == CredValid && !exact {
		return CredEither, token
	}
	return c, token
}

// token classes one bearer token.
func (k *Keys) token(t string) Cred {
	switch {
	case k.plan(t) != "":
		return CredValid
	case slices.Contains(k.Revoked, t):
		return CredRevoked
	case k.Prefix != "" && strings.HasPrefix(t, k.Prefix+"_"):
		return CredUnknown
	}
	return CredMalformed
}

// keyElsewhere reports whether a valid key stands anywhere in the request
// but its Authorization header: the query, another header, the body.
func (j *judging) keyElsewhere() bool {
	var places []string
	places = append(places, j.req.Query, string(j.req.Body))
	for _, f := range j.req.Header {
		if !strings.EqualFold(f.Name, "Authorization") {
			places = append(places, f.Value)
		}
	}
	for _, key := range slices.Concat(j.o.keys.Pro, j.o.keys.Free) {
		for _, p := range places {
			if key != "" && strings.Contains(p, key) {
				return true
			}
		}
	}
	return false
}

// plan is a valid key's plan, "" for no valid key.
func (k *Keys) plan(t string) Plan {
	switch {
	case t == "":
		return ""
	case slices.Contains(k.Pro, t):
		return PlanPro
	case slices.Contains(k.Free, t):
		return PlanFree
	}
	return ""
}

// feedQuery is what a feed request's query asks for.
type feedQuery struct {
	// size is the page size asked for (the default, a limit, the cap); 0
	// when the limit is one the contract leaves open.
	size int
	// sizeRule is the requirement that decides the page's size.
	sizeRule catalogue.ID
	// readings are the page sizes a limit written otherwise (05, +5) may
	// mean when it is served: its value, or the default when ignored.
	readings []int
	// open are the parameters whose values the contract leaves open (a
	// limit below 1 or not an integer, an unknown cursor, any other
	// parameter): 400 naming them, or a page, both conform.
	open []string
	// cursor is the cursor sent, and issued its issuing page when the
	// target handed it to the same key; foreign when to another key.
	cursor  string
	issued  *issue
	foreign *issue
	// broken: the query does not parse at all.
	broken bool
}

// canonicalInt is a limit the contract decides: a positive integer written
// plainly, however long ("larger values are capped").
var canonicalInt = regexp.MustCompile(`^[1-9][0-9]{0,999}$`)

// decimalInt is a limit that is an integer written otherwise: a sign or
// leading zeros.
var decimalInt = regexp.MustCompile(`^\+?0*[0-9]{1,15}$`)

func (o *Oracle) feedQuery(req client.Request, token string) feedQuery {
	q := feedQuery{size: schemas.DefaultPageSize, sizeRule: catalogue.FeedPageDefault}
	vals, err := url.ParseQuery(req.Query)
	if err != nil {
		q.broken, q.size, q.open = true, 0, []string{"query"}
		return q
	}
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		v := vals[name]
		switch name {
		case "limit":
			if len(v) != 1 || !canonicalInt.MatchString(v[0]) {
				q.size, q.sizeRule = 0, catalogue.FeedLimitCap
				q.open = append(q.open, name)
				if len(v) == 1 && decimalInt.MatchString(v[0]) {
					// 05, +5: an integer read plainly, or a value refused or
					// ignored; nothing else (not octal, not a part of it)
					if n := atoi(strings.TrimLeft(v[0], "+0")); n >= 1 {
						q.readings = []int{min(n, schemas.MaxPageSize), schemas.DefaultPageSize}
					}
				}
				continue
			}
			n := atoi(v[0])
			q.size, q.sizeRule = n, catalogue.FeedLimit
			if len(v[0]) > 3 || n > schemas.MaxPageSize {
				q.size, q.sizeRule = schemas.MaxPageSize, catalogue.FeedLimitCap
			}
		case "cursor":
			if len(v) != 1 || v[0] == "" {
				// "" was never handed out: not the first page's omission
				q.open = append(q.open, name)
				continue
			}
			q.cursor = v[0]
			switch own, any := o.m.byKey[v[0]][token], o.m.issued[v[0]]; {
			case own != nil:
				q.issued = own
			case any != nil:
				q.foreign = any
				q.open = append(q.open, name)
			default:
				q.open = append(q.open, name)
			}
		default:
			q.open = append(q.open, name)
		}
	}
	return q
}

// owner400 is the requirement a 400 to a query the contract decides
// breaks: the cursor walk when it carried a cursor the target handed out
// (unless the details blame the limit), else the page size's rule.
func (q feedQuery) owner400(details string) catalogue.ID {
	if q.issued != nil && (strings.Contains(details, "cursor") || !strings.Contains(details, "limit")) {
		return catalogue.FeedCursorWalk
	}
	return q.sizeRule
}

// videosBody is what a tracked-videos body is, by the contract's rules.
type videosBody struct {
	verdict verdict
	// owner is the requirement that decides this body's answer: the rule
	// an invalid body breaks, or the bound a valid one sits at.
	owner catalogue.ID
	why   string
	ids   []string // the videoIds, when they are a list of strings
	// alt are the ids of another reading of the body (a repeated videoIds
	// member: the first one); a 200 may answer either.
	alt []string
	// refused are the ids of a reading the contract refuses (a repeated
	// videoIds whose other value breaks a bound), and refusedBy the rule
	// it breaks: a 200 that answers it is that rule's break
	refused   []string
	refusedBy catalogue.ID
	mediaOK   bool
	// atCount: 20 ids; atLen: an id of 32 characters
	atCount, atLen bool
	// restyled: the body's JSON text or its framing is not the plain one
	// (whitespace around or between its tokens, a chunked body): a valid
	// body refused so was refused for its form, VIDEOS-BAD-BODY's
	restyled bool
}

type verdict string

const (
	valid   verdict = "valid"
	invalid verdict = "invalid"
	either  verdict = "either" // the contract leaves it open: 200 or 400
)

// IsJSONMediaType reports whether a Content-Type value names JSON
// (application/json or application/…+json, any parameters, any case).
func IsJSONMediaType(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

var bom = []byte("\xef\xbb\xbf")

// classVideos reads a tracked-videos body.
func classVideos(req client.Request) videosBody {
	cts := req.Values("Content-Type")
	b := videosBody{mediaOK: len(cts) == 1 && IsJSONMediaType(cts[0])}
	raw := req.Body
	hasBOM := bytes.HasPrefix(raw, bom)
	raw = bytes.TrimPrefix(raw, bom)
	b.verdict, b.owner, b.why = readVideos(raw, &b)
	var compact bytes.Buffer
	b.restyled = req.Framing.Chunked || json.Compact(&compact, raw) == nil && !bytes.Equal(compact.Bytes(), raw)
	if first := repeatedMember(raw, "videoIds"); first != nil {
		b = eitherReading(b, first)
	}
	switch {
	case b.verdict == valid && hasBOM:
		// RFC 8259: a parser MAY ignore a byte order mark
		b.verdict, b.why = either, "a body that starts with a byte order mark (RFC 8259 lets a parser ignore it or refuse it)"
	case b.verdict == valid && !b.mediaOK:
		b.verdict, b.why = either, "a valid body sent without the JSON media type the contract asks for"
	}
	return b
}

func readVideos(raw []byte, b *videosBody) (verdict, catalogue.ID, string) {
	bad := func(id catalogue.ID, why string) (verdict, catalogue.ID, string) { return invalid, id, why }
	if !utf8.Valid(raw) {
		return bad(catalogue.VideosBadBody, "the body is not UTF-8")
	}
	doc, err := jsondoc.Decode(raw)
	if err != nil {
		return bad(catalogue.VideosBadBody, "the body is not one JSON value: "+err.Error())
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return bad(catalogue.VideosBadBody, "the body is not a JSON object")
	}
	raws, ok := obj["videoIds"]
	if !ok {
		return bad(catalogue.VideosBadBody, "the body has no videoIds member (member names are case-sensitive)")
	}
	arr, ok := raws.([]any)
	if !ok {
		return bad(catalogue.VideosBadBody, "videoIds is not an array")
	}
	ids := make([]string, 0, len(arr))
	for _, x := range arr {
		s, ok := x.(string)
		if !ok {
			return bad(catalogue.VideosBadBody, "an item of videoIds is not a string")
		}
		ids = append(ids, s)
	}
	b.ids = ids
	switch {
	case len(ids) < schemas.MinVideoIDs:
		return bad(catalogue.VideosIDsMin, "videoIds is empty")
	case len(ids) > schemas.MaxVideoIDs:
		return bad(catalogue.VideosIDsMax, "videoIds holds more than 20 ids")
	}
	unsure := false
	owner := catalogue.VideosBadBody
	switch len(ids) {
	case schemas.MinVideoIDs:
		owner = catalogue.VideosIDsMin
	case schemas.MaxVideoIDs:
		owner = catalogue.VideosIDsMax
		b.atCount = true
	}
	for _, id := range ids {
		n, g := utf8.RuneCountInString(id), graphemes(id)
		switch {
		case n < schemas.MinVideoIDLen:
			return bad(catalogue.VideosIDLen, "an id is empty")
		case n > schemas.MaxVideoIDLen && g > schemas.MaxVideoIDLen:
			return bad(catalogue.VideosIDLen, "an id is longer than 32 characters")
		case n > schemas.MaxVideoIDLen:
			unsure = true
		case n == schemas.MaxVideoIDLen:
			b.atLen = true
			if !b.atCount {
				owner = catalogue.VideosIDLen
			}
		}
	}
	if owner == catalogue.VideosBadBody || owner == catalogue.VideosIDsMin {
		// a valid body refused while no bound is at stake but an id's
		// length as a server may count it (bytes, trimmed): the length's
		for _, id := range ids {
			if len(id) != utf8.RuneCountInString(id) || strings.TrimSpace(id) != id {
				owner = catalogue.VideosIDLen
				break
			}
		}
	}
	if owner == catalogue.VideosBadBody && repeatsAnID(ids) {
		// a valid body refused for an id it holds twice: the count's rule
		// says what a batch of at most 20 ids is, repeats included
		owner = catalogue.VideosIDsMax
	}
	if owner == catalogue.VideosBadBody {
		owner = insideOwner(ids)
	}
	switch {
	case unsure:
		return either, catalogue.VideosIDLen, "an id of combining marks, past 32 characters as code points and not as characters"
	case len(obj) > 1:
		return either, catalogue.VideosBadBody, "members besides videoIds (the contract shows none: a server may ignore or refuse them)"
	}
	return valid, owner, ""
}

// insideOwner is the rule a valid body at no bound breaks when it is
// refused: an id within a character of a bound of its length
// ("each item 1 to 32 characters"), the length's; else the count's range
// ("1 to 20 items") is narrower than the contract's at one end, the end
// its count lies nearer to (a lower bound set too high refuses small
// counts first, an upper one set too low large counts).
func insideOwner(ids []string) catalogue.ID {
	for _, id := range ids {
		if n := utf8.RuneCountInString(id); n <= schemas.MinVideoIDLen+1 || n >= schemas.MaxVideoIDLen-1 {
			return catalogue.VideosIDLen
		}
	}
	if 2*len(ids) <= schemas.MinVideoIDs+schemas.MaxVideoIDs {
		return catalogue.VideosIDsMin
	}
	return catalogue.VideosIDsMax
}

func repeatsAnID(ids []string) bool {
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return true
		}
		seen[id] = true
	}
	return false
}

// graphemes counts characters as a reader sees them: a combining mark
// joins the character before it.
func graphemes(s string) int {
	n := 0
	for i, r := range s {
		if i == 0 || !unicode.Is(unicode.Mn, r) {
			n++
		}
	}
	return n
}

// eitherReading classes a body that gives videoIds twice (last is the
// class of its last value, what encoding/json keeps): RFC 8259 §4 makes
// what a parser keeps unpredictable, so the first value, the last or a
// refusal (400) all conform, and a 200 must answer a reading that is a
// valid body (the partition of its ids).
func eitherReading(last videosBody, first json.RawMessage) videosBody {
	var f videosBody
	f.verdict, f.owner, _ = readVideos([]byte(`{"videoIds":`+string(first)+`}`), &f)
	out := last
	switch {
	case last.verdict != invalid && f.verdict != invalid:
		out.alt = append([]string{}, f.ids...)
	case f.verdict != invalid:
		out = f // only the first reading can be served
		out.refused, out.refusedBy = last.ids, last.owner
	case last.verdict == invalid:
		return last
	default:
		out.refused, out.refusedBy = f.ids, f.owner
	}
	out.verdict, out.why = either, "videoIds given twice (RFC 8259 §4: a parser may keep the first, the last, or refuse it)"
	return out
}

// repeatedMember returns the raw first value of a member of the top-level
// object when the member appears more than once (encoding/json keeps the
// last); nil otherwise.
func repeatedMember(raw []byte, name string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var first json.RawMessage
	seen := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if k, _ := t.(string); k == name {
			if seen++; seen == 1 {
				first = v
			}
		}
	}
	if seen < 2 {
		return nil
	}
	return first
}

// healthBody: the usage shown is a JSON object; anything else, the
// contract leaves open.
func healthBodyValid(req client.Request) bool {
	cts := req.Values("Content-Type")
	if len(cts) != 1 || !IsJSONMediaType(cts[0]) || bytes.HasPrefix(req.Body, bom) {
		return false
	}
	doc, err := jsondoc.Decode(req.Body)
	_, ok := doc.(map[string]any)
	return err == nil && ok && utf8.Valid(req.Body)
}

// atoi reads digits, as far as an int holds them (callers cap long ones).
func atoi(s string) int {
	n := 0
	for _, c := range s {
		if n > 1<<40 {
			return n
		}
		n = n*10 + int(c-'0')
	}
	return n
}
