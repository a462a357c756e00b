// Package explore generates requests from HTTP's grammar rather than from
// the contract's table: other ways to carry a key (another scheme, other
// case and spacing, two headers, a look-alike or normalized key, the key
// in the query, a cookie or another header), other bodies (media types,
// form encoding, trailing data, a byte order mark, a repeated member,
// member names in another case or escaped, ids that differ only by case),
// other Accept headers, other query forms (repeated, empty, encoded
// parameters, limits across the integer line, a walk at a limit past the
// cap), other methods and request targets; and equivalences of the
// standards as transformations of a plain request, packed and split
// (transform.go, isolate.go).
//
// A variant says nothing of what the answer must be: the suite's contract
// oracle judges every answer by the request's class, so a new variant
// needs no oracle of its own. Sample picks variants for a seed: the same
// seed, the same requests.
package explore

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// Family is a part of HTTP's grammar a variant explores.
type Family string

const (
	Auth   Family = "authorization"
	Body   Family = "body"
	Accept Family = "accept"
	Query  Family = "query"
	Target Family = "method and target"
	// Equivalence: requests the standards read as a plain one
	// (Transformations), packed, and split where an answer differs.
	Equivalence Family = "equivalence"
)

// Families lists the families, in the order a sample visits them.
var Families = []Family{Equivalence, Auth, Body, Accept, Query, Target, Corpus}

// Spend is whose rate window a variant's requests spend.
type Spend string

const (
	SpendPro  Spend = "pro"
	SpendFree Spend = "free"
	// SpendNone: no valid key in the Authorization header (a key elsewhere
	// is none): no key's window pays, a round trip does.
	SpendNone Spend = "none"
)

// Keys are what a variant is built from.
type Keys struct {
	Pro, Free, Revoked string
	// Video is an id of a video the Pro key's feed shows ("" when none).
	Video string
	// Cursor is a nextCursor the Pro key was handed ("" when none): the
	// equivalences of the feed are those of a page of its walk.
	Cursor string
}

// Variant is one explored request, or a short sequence (a walk).
type Variant struct {
	Family Family
	// Name says what it sends, for people.
	Name  string
	Spend Spend
	// First: a variant the contract decides plainly where servers often
	// go wrong; a sample takes these before the rest of its family.
	First bool
	// Lead: a break no other request shows, and cheap; a sample takes
	// these before any other variant, within its budget (a lead is first
	// in its family too).
	Lead bool
	// Pages > 0 makes it a walk: the request, then its nextCursor, Pages
	// requests in all.
	Pages int
	// Base, when set, makes it the equivalences of a plain request: the
	// plain request, then each of Packs(Base), split where an answer
	// differs (Isolate).
	Base  Base
	build func(k Keys) (client.Request, bool)
}

// Cost is the requests a variant sends when nothing differs.
func (v Variant) Cost() int {
	if v.Base != "" {
		return 1 + len(Packs(v.Base))
	}
	return max(v.Pages, 1)
}

// Request builds the variant's (first) request from the keys; false when
// they cannot make it (no free key, no video).
func (v Variant) Request(k Keys) (client.Request, bool) { return v.build(k) }

// All lists every variant, in a fixed order.
func All() []Variant {
	var out []Variant
	out = append(out, authVariants()...)
	out = append(out, bodyVariants()...)
	out = append(out, acceptVariants()...)
	out = append(out, queryVariants()...)
	out = append(out, targetVariants()...)
	out = append(out, corpusVariants()...)
	out = append(out, equivalenceVariants()...)
	return out
}

func equivalenceVariants() []Variant {
	var out []Variant
	for _, b := range Bases {
		spend := SpendPro
		if b == BaseHealth {
			spend = SpendNone
		}
		out = append(out, Variant{Family: Equivalence, Name: fmt.Sprintf("%s, and %d transformations of it in %d packed requests", b, len(TransformationsOf(b)), len(Packs(b))),
			Spend: spend, First: true, Base: b, build: func(k Keys) (client.Request, bool) { return Plain(b, k) }})
	}
	return out
}

// Budget bounds what a sample spends: requests on each valid key, and
// requests without one; a negative bound is none.
type Budget struct {
	Pro, Free, None int
}

// Sample picks variants for a seed within a budget: every family has its
// turn, one variant at a time, so a small budget still visits each; the
// order within a family is drawn from the seed. A zero budget (all fields
// 0) is no bound.
func Sample(seed uint64, b Budget) []Variant {
	rng := rand.New(rand.NewPCG(seed, 0x7463_6d6b_6974))
	byFamily := map[Family][]Variant{}
	for _, v := range All() {
		byFamily[v.Family] = append(byFamily[v.Family], v)
	}
	for _, f := range Families {
		vs := byFamily[f]
		rng.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		slices.SortStableFunc(vs, func(a, b Variant) int { return boolRank(b.First) - boolRank(a.First) })
	}
	unbounded := b == Budget{}
	left := map[Spend]int{SpendPro: b.Pro, SpendFree: b.Free, SpendNone: b.None}
	var out []Variant
	for _, f := range Families {
		byFamily[f] = slices.DeleteFunc(byFamily[f], func(v Variant) bool {
			if !v.Lead || !unbounded && left[v.Spend] >= 0 && left[v.Spend] < v.Cost() {
				return false
			}
			left[v.Spend] -= v.Cost()
			out = append(out, v)
			return true
		})
	}
	for more := true; more; {
		more = false
		for _, f := range Families {
			vs := byFamily[f]
			for len(vs) > 0 {
				v := vs[0]
				vs = vs[1:]
				cost := v.Cost()
				if unbounded || left[v.Spend] < 0 || left[v.Spend] >= cost {
					left[v.Spend] -= cost
					out = append(out, v)
					more = true
					break
				}
			}
			byFamily[f] = vs
		}
	}
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func feed(query, auth string) client.Request {
	return client.Request{Method: "GET", Path: schemas.PathFeed, Query: query, Auth: auth}
}

func videos(body, auth string) client.Request {
	return client.Request{Method: "POST", Path: schemas.PathVideos, Body: []byte(body), ContentType: "application/json", Auth: auth}
}

func health(auth string) client.Request {
	return client.Request{Method: "POST", Path: schemas.PathHealth, Body: []byte("{}"), ContentType: "application/json", Auth: auth}
}

// ops builds a request of each operation with an Authorization value.
var ops = []struct {
	name string
	req  func(auth string, k Keys) client.Request
}{
	{"the feed", func(auth string, _ Keys) client.Request { return feed("limit=1", auth) }},
	{"tracked videos", func(auth string, k Keys) client.Request { return videos(idsBody(k.Video, "~explored~"), auth) }},
}

// idsBody is a videoIds body of the ids that are not empty.
func idsBody(ids ...string) string {
	var q []string
	for _, id := range ids {
		if id != "" {
			q = append(q, fmt.Sprintf("%q", id))
		}
	}
	return `{"videoIds":[` + strings.Join(q, ",") + `]}`
}

// with adds header lines to a request.
func with(r client.Request, fs ...client.Field) client.Request {
	r.Header = append(slices.Clone(r.Header), fs...)
	return r
}

// authVariants are the requests of the Auth family: the Pro key in other
// forms and other places, two Authorization headers, the other keys with
// the scheme folded, health with keys.
func authVariants() []Variant {
	return slices.Concat(keyForms(), keyElsewhere(), forwardedFromLoopback(), twoAuthorizations(), otherKeysFolded(), healthWithKeys())
}

// keyForms are the Pro key in other forms of the Authorization header.
func keyForms() []Variant {
	var out []Variant
	forms := []struct {
		name  string
		spend Spend
		auth  func(key string) string
	}{
		{"the scheme in lower case (bearer)", SpendPro, func(k string) string { return "bearer " + k }},
		{"the scheme in upper case (BEARER)", SpendPro, func(k string) string { return "BEARER " + k }},
		{"two spaces after the scheme", SpendPro, func(k string) string { return "Bearer  " + k }},
		{"a tab after the scheme", SpendPro, func(k string) string { return "Bearer\t" + k }},
		{"the key twice", SpendNone, func(k string) string { return "Bearer " + k + " " + k }},
		{"a second token after the key", SpendNone, func(k string) string { return "Bearer " + k + " extra" }},
		{"a comma after the key", SpendNone, func(k string) string { return "Bearer " + k + "," }},
		{"a colon after the scheme", SpendNone, func(k string) string { return "Bearer: " + k }},
		{"no space between the scheme and the key (RFC 6750 §2.1: 1*SP; a parser that trims the scheme off takes it)", SpendNone, func(k string) string { return "Bearer" + k }},
		{"the key alone, no scheme", SpendNone, func(k string) string { return k }},
		{"scheme Token", SpendNone, func(k string) string { return "Token " + k }},
		{"scheme Basic, the key as user", SpendNone, func(k string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(k+":")) }},
		{"scheme Basic, the key as password", SpendNone, func(k string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(":"+k)) }},
		{"scheme Bearer with the key in base64", SpendNone, func(k string) string { return "Bearer " + base64.StdEncoding.EncodeToString([]byte(k)) }},
		{"a Cyrillic look-alike for one letter of the key", SpendNone, func(k string) string { return "Bearer " + lookAlike(k) }},
		{"the key in fullwidth letters (NFKC folds them to the key)", SpendNone, func(k string) string { return "Bearer " + fullwidth(k) }},
		{"a zero-width space inside the key", SpendNone, func(k string) string { return "Bearer " + insertMid(k, "\u200b") }},
		{"a soft hyphen inside the key", SpendNone, func(k string) string { return "Bearer " + insertMid(k, "\u00ad") }},
		{"the key with its prefix in the other case", SpendNone, func(k string) string { return "Bearer " + swapPrefixCase(k) }},
		{"the key URL-encoded", SpendNone, func(k string) string { return "Bearer " + percentAll(k) }},
	}
	for _, f := range forms {
		for _, op := range ops {
			out = append(out, Variant{Family: Auth, Name: fmt.Sprintf("%s with Authorization: the Pro key, %s", op.name, f.name), Spend: f.spend,
				build: func(k Keys) (client.Request, bool) { return op.req(f.auth(k.Pro), k), true }})
		}
	}
	return out
}

// keyElsewhere is the key carried anywhere but the Authorization header.
func keyElsewhere() []Variant {
	var out []Variant
	elsewhere := []struct {
		name  string
		place func(r client.Request, key string) client.Request
	}{
		{"the key in the query as api_key, no Authorization", func(r client.Request, k string) client.Request {
			r.Query = addQuery(r.Query, "api_key", k)
			return r
		}},
		{"the key in the query as key, no Authorization", func(r client.Request, k string) client.Request {
			r.Query = addQuery(r.Query, "key", k)
			return r
		}},
		{"the key in a cookie, no Authorization", func(r client.Request, k string) client.Request {
			return with(r, client.Field{Name: "Cookie", Value: "api_key=" + k + "; token=" + k})
		}},
		{"the key in X-Api-Key, no Authorization", func(r client.Request, k string) client.Request {
			return with(r, client.Field{Name: "X-Api-Key", Value: k})
		}},
		{"Bearer and the key in X-Auth-Token, no Authorization", func(r client.Request, k string) client.Request {
			return with(r, client.Field{Name: "X-Auth-Token", Value: "Bearer " + k})
		}},
		{"an empty Authorization and the key in the query", func(r client.Request, k string) client.Request {
			r.Query = addQuery(r.Query, "api_key", k)
			return with(r, client.Field{Name: "Authorization", Value: "Bearer"})
		}},
	}
	for _, e := range elsewhere {
		for _, op := range ops {
			out = append(out, Variant{Family: Auth, Name: fmt.Sprintf("%s with %s", op.name, e.name), Spend: SpendNone,
				build: func(k Keys) (client.Request, bool) { return e.place(op.req("", k), k.Pro), true }})
		}
	}
	return out
}

// forwardedFromLoopback is no key, from the loopback address by the
// forwarding fields (RFC 7239 §8.1: any client can write them): still a
// missing key.
func forwardedFromLoopback() []Variant {
	var out []Variant
	for _, op := range ops {
		out = append(out, Variant{Family: Auth, Name: op.name + " without a key, forwarded for 127.0.0.1 (X-Forwarded-For, X-Real-IP, Forwarded)", Spend: SpendNone, First: true,
			build: func(k Keys) (client.Request, bool) { return with(op.req("", k), proxyFields...), true }})
	}
	return out
}

// twoAuthorizations are requests with two Authorization headers.
func twoAuthorizations() []Variant {
	var out []Variant
	twice := []struct {
		name  string
		spend Spend
		vals  func(k Keys) []string
	}{
		{"the Pro key twice", SpendPro, func(k Keys) []string { return []string{"Bearer " + k.Pro, "Bearer " + k.Pro} }},
		{"a bad key, then the Pro key", SpendPro, func(k Keys) []string { return []string{"Bearer not-a-key", "Bearer " + k.Pro} }},
		{"the Pro key, then an empty one", SpendPro, func(k Keys) []string { return []string{"Bearer " + k.Pro, "Bearer "} }},
	}
	for _, t := range twice {
		for _, op := range ops {
			out = append(out, Variant{Family: Auth, Name: fmt.Sprintf("%s with two Authorization headers: %s", op.name, t.name), Spend: t.spend,
				build: func(k Keys) (client.Request, bool) {
					r := op.req("", k)
					for _, v := range t.vals(k) {
						r = with(r, client.Field{Name: "Authorization", Value: v})
					}
					return r, true
				}})
		}
	}
	return out
}

// otherKeysFolded are the scheme in another case with the other keys: a
// server that folds the scheme may skip the checks that follow it.
func otherKeysFolded() []Variant {
	var out []Variant
	for _, f := range []struct {
		name  string
		spend Spend
		key   func(k Keys) (string, bool)
	}{
		{"the free key", SpendFree, func(k Keys) (string, bool) { return k.Free, k.Free != "" }},
		{"the revoked key", SpendNone, func(k Keys) (string, bool) { return k.Revoked, k.Revoked != "" }},
		{"a key of no account", SpendNone, func(k Keys) (string, bool) { return unknownOf(k.Pro), true }},
	} {
		for _, op := range ops {
			out = append(out, Variant{Family: Auth, Name: fmt.Sprintf("%s with Authorization: bearer (lower case) and %s", op.name, f.name), Spend: f.spend, First: f.spend == SpendFree && op.name == "tracked videos",
				build: func(k Keys) (client.Request, bool) {
					key, ok := f.key(k)
					return op.req("bearer "+key, k), ok
				}})
		}
	}
	return out
}

// healthWithKeys is health with keys: whether it takes one is open, a
// valid one is accepted.
func healthWithKeys() []Variant {
	var out []Variant
	for _, h := range []struct {
		name  string
		spend Spend
		auth  func(k Keys) (string, bool)
	}{
		{"the Pro key", SpendPro, func(k Keys) (string, bool) { return "Bearer " + k.Pro, true }},
		{"the free key", SpendFree, func(k Keys) (string, bool) { return "Bearer " + k.Free, k.Free != "" }},
		{"the Pro key, scheme in lower case", SpendPro, func(k Keys) (string, bool) { return "bearer " + k.Pro, true }},
		{"a malformed key", SpendNone, func(Keys) (string, bool) { return "Bearer nope", true }},
	} {
		out = append(out, Variant{Family: Auth, Name: "health with " + h.name, Spend: h.spend, build: func(k Keys) (client.Request, bool) {
			a, ok := h.auth(k)
			return health(a), ok
		}})
	}
	return out
}

// firstBodies are the bodies a sample sends first: the contract decides
// their answer, and a server's parser often does otherwise.
var firstBodies = map[string]bool{
	"a form-encoded body": true, "the member VideoIds": true, "a null among the ids": true,
	"an id in the other case than the feed's": true, "an id and the same id in the other case": true,
	"a JSON body then garbage": true, `the member name escaped (video\u0049ds is videoIds)`: true,
	"an id of 33 characters, its last a space": true,
	// what lenient parsers take (JSON5, comments, Python's literals)
	"single quotes": true, "a trailing comma": true, "a comment inside": true,
}

// bodyForm is a tracked-videos body and its media type.
type bodyForm struct {
	name string
	ct   string // "" sends none
	body func(k Keys) string
}

// leadBodies are sent before any other variant: a parser that checked one
// reading of a repeated member and answered the other (RFC 8259 §4 allows
// either reading, or a refusal, not both at once), each way round; a raw
// control character inside a string (RFC 8259 §7: it must be escaped, so
// the body is no JSON), which lenient parsers take; a valid body past a
// body-size limit, which middleware refuses in its own words.
func leadBodies() []bodyForm {
	return []bodyForm{
		{"videoIds twice, the feed's video then 21 ids (one reading valid, the other past the bound)", "application/json", func(k Keys) string {
			return `{"videoIds":[` + jsonQuote(or(k.Video, "~explored~")) + `],"videoIds":[` + ids21(k) + `]}`
		}},
		{"videoIds twice, 21 ids then the feed's video (one reading past the bound, the other valid)", "application/json", func(k Keys) string {
			return `{"videoIds":[` + ids21(k) + `],"videoIds":[` + jsonQuote(or(k.Video, "~explored~")) + `]}`
		}},
		{"a raw tab inside an id (RFC 8259 §7: a control character in a string must be escaped)", "application/json", func(k Keys) string {
			return "{\"videoIds\":[\"~explored\ttab~\"]}"
		}},
		{"a valid body of 12 KiB, whitespace between its members (RFC 8259 §2; a server may refuse it with a 413 in an ErrorBody, RFC 9110 §15.5.14)", "application/json", func(k Keys) string {
			pad := strings.Repeat(" ", 12<<10)
			return `{"videoIds":` + pad + `[` + jsonQuote(or(k.Video, "~explored~")) + `]` + pad + `}`
		}},
	}
}

func bodyVariants() []Variant {
	type b = bodyForm
	one := func(k Keys) string { return idsBody(k.Video, "~explored~") }
	bodies := []b{
		{"Content-Type text/plain", "text/plain", one},
		{"no Content-Type", "", one},
		{"Content-Type application/json; charset=utf-8", "application/json; charset=utf-8", one},
		{"Content-Type APPLICATION/JSON", "APPLICATION/JSON", one},
		{"Content-Type application/x-www-form-urlencoded, a JSON body", "application/x-www-form-urlencoded", one},
		{"a form-encoded body", "application/x-www-form-urlencoded", func(k Keys) string { return "videoIds=" + url.QueryEscape(or(k.Video, "~explored~")) }},
		{"a form-encoded body, videoIds[]", "application/x-www-form-urlencoded", func(k Keys) string { return "videoIds%5B%5D=" + url.QueryEscape(or(k.Video, "~explored~")) }},
		{"a JSON body then garbage", "application/json", func(k Keys) string { return one(k) + " garbage" }},
		{"two JSON objects", "application/json", func(k Keys) string { return one(k) + one(k) }},
		{"a byte order mark first", "application/json", func(k Keys) string { return "\ufeff" + one(k) }},
		{"videoIds twice", "application/json", func(k Keys) string {
			return `{"videoIds":["~explored~a"],"videoIds":["~explored~b"]}`
		}},
		{"videoIds twice, the feed's video then an empty list", "application/json", func(k Keys) string {
			return `{"videoIds":[` + jsonQuote(or(k.Video, "~explored~")) + `],"videoIds":[]}`
		}},
		{"videoIds twice, an empty list then the feed's video", "application/json", func(k Keys) string {
			return `{"videoIds":[],"videoIds":[` + jsonQuote(or(k.Video, "~explored~")) + `]}`
		}},
		{"the member VideoIds", "application/json", func(k Keys) string { return strings.Replace(one(k), "videoIds", "VideoIds", 1) }},
		{"the member videoids", "application/json", func(k Keys) string { return strings.Replace(one(k), "videoIds", "videoids", 1) }},
		{"the member VIDEOIDS", "application/json", func(k Keys) string { return strings.Replace(one(k), "videoIds", "VIDEOIDS", 1) }},
		{"the member name escaped (video\\u0049ds is videoIds)", "application/json", func(k Keys) string { return strings.Replace(one(k), "videoIds", `video\u0049ds`, 1) }},
		{"an id escaped (\\u0061 for its first letter)", "application/json", func(k Keys) string { return `{"videoIds":["\u007eexplored~escaped"]}` }},
		{"whitespace around the object", "application/json", func(k Keys) string { return " \n\t" + one(k) + " \r\n" }},
		{"a comment inside", "application/json", func(k Keys) string { return strings.Replace(one(k), "{", "{/* ids */", 1) }},
		{"single quotes", "application/json", func(k Keys) string { return strings.ReplaceAll(one(k), `"`, `'`) }},
		{"videoIds nested in data", "application/json", func(k Keys) string { return `{"data":` + one(k) + `}` }},
		{"a null among the ids", "application/json", func(k Keys) string { return `{"videoIds":["~explored~",null]}` }},
		{"an object among the ids", "application/json", func(k Keys) string { return `{"videoIds":["~explored~",{"id":"x"}]}` }},
		{"a boolean among the ids", "application/json", func(k Keys) string { return `{"videoIds":[true,"~explored~"]}` }},
		{"videoIds null", "application/json", func(k Keys) string { return `{"videoIds":null}` }},
		{"a trailing comma", "application/json", func(k Keys) string { return strings.Replace(one(k), "]}", ",]}", 1) }},
		{"an id in the other case than the feed's", "application/json", func(k Keys) string {
			if k.Video == "" || probe.SwapCase(k.Video) == k.Video {
				return ""
			}
			return idsBody(probe.SwapCase(k.Video))
		}},
		{"an id and the same id in the other case", "application/json", func(k Keys) string {
			if k.Video == "" || probe.SwapCase(k.Video) == k.Video {
				return ""
			}
			return idsBody(k.Video, probe.SwapCase(k.Video))
		}},
		{"an id of 33 characters, its last a space", "application/json", func(k Keys) string { return idsBody("~explored~" + strings.Repeat("x", 22) + " ") }},
		{"an id of 33 characters, its first a space", "application/json", func(k Keys) string { return idsBody(" ~explored~" + strings.Repeat("x", 22)) }},
		{"an id with a trailing space", "application/json", func(k Keys) string {
			if k.Video == "" {
				return ""
			}
			return idsBody(k.Video + " ")
		}},
		{"an id NFKC folds to the feed's (fullwidth)", "application/json", func(k Keys) string {
			if k.Video == "" {
				return ""
			}
			return idsBody(fullwidth(k.Video))
		}},
	}
	leads := leadBodies()
	lead := map[string]bool{}
	for _, x := range leads {
		lead[x.name] = true
	}
	bodies = append(bodies, leads...)
	var out []Variant
	for _, x := range bodies {
		out = append(out, Variant{Family: Body, Name: "tracked videos with the Pro key, " + x.name, Spend: SpendPro, First: firstBodies[x.name] || lead[x.name], Lead: lead[x.name], build: func(k Keys) (client.Request, bool) {
			body := x.body(k)
			if body == "" {
				return client.Request{}, false
			}
			return client.Request{Method: "POST", Path: schemas.PathVideos, Body: []byte(body), ContentType: x.ct, Auth: "Bearer " + k.Pro}, true
		}})
	}
	for _, h := range []struct{ name, ct, body string }{
		{"no body", "", ""},
		{"Content-Type text/plain", "text/plain", "{}"},
		{"an array", "application/json", "[]"},
		{"garbage", "application/json", "{"},
	} {
		out = append(out, Variant{Family: Body, Name: "health without a key, " + h.name, Spend: SpendNone, build: func(Keys) (client.Request, bool) {
			r := client.Request{Method: "POST", Path: schemas.PathHealth, ContentType: h.ct}
			if h.body != "" || h.ct != "" {
				r.Body = []byte(h.body)
			}
			return r, true
		}})
	}
	return out
}

func acceptVariants() []Variant {
	var out []Variant
	for _, a := range []string{"text/html", "application/xml", "*/*", "text/*", client.NoAccept, "application/json;q=0, text/plain", "application/problem+json", "image/png"} {
		name := "Accept: " + a
		if a == client.NoAccept {
			name = "no Accept header"
		}
		reqs := []struct {
			what  string
			spend Spend
			req   func(k Keys) client.Request
		}{
			{"the feed with the free key", SpendFree, func(k Keys) client.Request { return feed("limit=2", "Bearer "+k.Free) }},
			{"tracked videos with the Pro key", SpendPro, func(k Keys) client.Request { return videos(idsBody(k.Video, "~explored~"), "Bearer "+k.Pro) }},
			{"the feed without a key", SpendNone, func(Keys) client.Request { return feed("", "") }},
			{"tracked videos with a bad body", SpendPro, func(k Keys) client.Request { return videos("{}", "Bearer "+k.Pro) }},
			{"health", SpendNone, func(Keys) client.Request { return health("") }},
		}
		for _, r := range reqs {
			out = append(out, Variant{Family: Accept, Name: r.what + ", " + name, Spend: r.spend, build: func(k Keys) (client.Request, bool) {
				req := r.req(k)
				req.Accept = a
				return req, r.spend != SpendFree || k.Free != ""
			}})
		}
	}
	return out
}

// firstQueries are the queries a sample sends first.
var firstQueries = map[string]bool{"limit=%35": true, "limit=1000": true, "limit=5&limit=10": true, "limit=184467440737095516160": true,
	"limit=abc&cursor=tcmkit-no-such-cursor": true}

func queryVariants() []Variant {
	var out []Variant
	queries := []string{
		"limit=5&limit=10", "limit=", "limit=%35", "limit=%2B5", "limit=05", "limit=5.0", "limit=1e1", "limit=0x10",
		"limit=+5", "limit=%205", "limit=5%20", "limit=010", "limit=050", "limit=%30%35%30", "limit=-0", "limit=1000", "limit=99999", "limit=2147483648",
		"limit=9223372036854775808", "limit=184467440737095516160", "LIMIT=5", "limit=5&foo=bar", "cursor=", "cursor=&limit=3",
		"limit=0&cursor=tcmkit-no-such-cursor", "limit=abc&cursor=tcmkit-no-such-cursor", "limit=3;cursor=x", "limit=3&", "&limit=3", "limit",
	}
	// each query on one key, the keys in turn: the rules do not depend on
	// the plan, and a break for one plan only shows on another query
	who := []struct {
		spend Spend
		key   func(k Keys) string
	}{{SpendFree, func(k Keys) string { return k.Free }}, {SpendPro, func(k Keys) string { return k.Pro }}}
	for i, q := range queries {
		w := who[i%2]
		out = append(out, Variant{Family: Query, Name: fmt.Sprintf("the feed with the %s key, ?%s", w.spend, q), Spend: w.spend, First: firstQueries[q], build: func(k Keys) (client.Request, bool) {
			key := w.key(k)
			return feed(q, "Bearer "+key), key != ""
		}})
	}
	// walks at a limit past the cap, and at small limits, on each key
	for _, w := range []struct {
		limit string
		pages int
	}{{"500", 3}, {"201", 2}, {"99999", 2}, {"7", 4}} {
		for _, who := range []struct {
			spend Spend
			key   func(k Keys) string
		}{{SpendPro, func(k Keys) string { return k.Pro }}, {SpendFree, func(k Keys) string { return k.Free }}} {
			out = append(out, Variant{Family: Query, Name: fmt.Sprintf("a walk of %d pages at limit=%s with the %s key", w.pages, w.limit, who.spend), Spend: who.spend, Pages: w.pages,
				build: func(k Keys) (client.Request, bool) {
					key := who.key(k)
					return feed("limit="+w.limit, "Bearer "+key), key != ""
				}})
		}
	}
	return out
}

func targetVariants() []Variant {
	var out []Variant
	paths := []string{schemas.PathFeed, schemas.PathVideos, schemas.PathHealth}
	for _, p := range paths {
		for _, m := range []string{"HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"} {
			out = append(out, Variant{Family: Target, Name: fmt.Sprintf("%s %s without a key", m, p), Spend: SpendNone,
				build: func(Keys) (client.Request, bool) { return client.Request{Method: m, Path: p}, true }})
		}
	}
	out = append(out,
		Variant{Family: Target, Name: "POST " + schemas.PathFeed + " without a key", Spend: SpendNone, build: func(Keys) (client.Request, bool) {
			return client.Request{Method: "POST", Path: schemas.PathFeed, Body: []byte("{}"), ContentType: "application/json"}, true
		}},
		Variant{Family: Target, Name: "GET " + schemas.PathVideos + " without a key", Spend: SpendNone, build: func(Keys) (client.Request, bool) {
			return client.Request{Method: "GET", Path: schemas.PathVideos}, true
		}},
	)
	// HEAD is GET without content (RFC 9110 §9.3.2): a valid key is never
	// refused for it, a bad one never served
	out = append(out, Variant{Family: Target, Name: "HEAD " + schemas.PathFeed + " with the Pro key", Spend: SpendPro,
		build: func(k Keys) (client.Request, bool) {
			return client.Request{Method: "HEAD", Path: schemas.PathFeed, Query: "limit=1", Auth: "Bearer " + k.Pro}, true
		}})
	for _, p := range []string{schemas.PathFeed + "/", "/" + schemas.PathFeed, schemas.PathFeed + ";x", strings.ToUpper(schemas.PathFeed),
		strings.Replace(schemas.PathFeed, "-", "%2D", 1), strings.Replace(schemas.PathFeed, "/public", "/./public", 1), "/api/v1/public-feed", "/api/public-feed.json"} {
		out = append(out, Variant{Family: Target, Name: "GET " + p + " without a key", Spend: SpendNone,
			build: func(Keys) (client.Request, bool) { return client.Request{Method: "GET", Path: p}, true }})
		out = append(out, Variant{Family: Target, Name: "GET " + p + " with a malformed key", Spend: SpendNone,
			build: func(k Keys) (client.Request, bool) {
				return client.Request{Method: "GET", Path: p, Auth: "Token " + k.Pro}, true
			}})
	}
	for _, p := range []string{schemas.PathVideos + "/", strings.ToUpper(schemas.PathVideos)} {
		out = append(out, Variant{Family: Target, Name: "POST " + p + " without a key", Spend: SpendNone,
			build: func(k Keys) (client.Request, bool) {
				return client.Request{Method: "POST", Path: p, Body: []byte(idsBody(k.Video)), ContentType: "application/json"}, true
			}})
	}
	return out
}

// ids21 are 21 ids, one past the bound, the feed's video among them, as
// JSON strings.
func ids21(k Keys) string {
	q := []string{jsonQuote(or(k.Video, "~explored~"))}
	for i := 1; i <= schemas.MaxVideoIDs; i++ {
		q = append(q, jsonQuote(fmt.Sprintf("~explored~%d", i)))
	}
	return strings.Join(q, ",")
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func addQuery(q, name, v string) string {
	p := url.QueryEscape(name) + "=" + url.QueryEscape(v)
	if q == "" {
		return p
	}
	return q + "&" + p
}

// lookAlike replaces the first a, e, o, c, p or x after the prefix with its
// Cyrillic look-alike.
func lookAlike(k string) string {
	cyr := map[rune]rune{'a': 'а', 'e': 'е', 'o': 'о', 'c': 'с', 'p': 'р', 'x': 'х', 'A': 'А', 'E': 'Е', 'O': 'О', 'C': 'С', 'P': 'Р', 'X': 'Х'}
	i := strings.IndexByte(k, '_') + 1
	rs := []rune(k[i:])
	for j, r := range rs {
		if c, ok := cyr[r]; ok {
			rs[j] = c
			return k[:i] + string(rs)
		}
	}
	return k[:i] + "а" + k[i+1:]
}

// fullwidth writes the printable ASCII characters in their fullwidth
// forms, which NFKC folds back.
func fullwidth(k string) string {
	return strings.Map(func(r rune) rune {
		if r > ' ' && r < 0x7f {
			return r - 0x21 + 0xff01
		}
		return r
	}, k)
}

func insertMid(k, s string) string {
	i := strings.IndexByte(k, '_') + 1
	mid := i + (len(k)-i)/2
	return k[:mid] + s + k[mid:]
}

// unknownOf is a key of the Pro key's shape that is no account's.
func unknownOf(k string) string {
	i := strings.IndexByte(k, '_') + 1
	return k[:i] + strings.Repeat("Z", max(len(k)-i, 8))
}

func swapPrefixCase(k string) string {
	i := strings.IndexByte(k, '_')
	if i < 0 {
		return k
	}
	return probe.SwapCase(k[:i]) + k[i:]
}

func percentAll(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		fmt.Fprintf(&b, "%%%02X", k[i])
	}
	return b.String()
}
