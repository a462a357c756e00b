package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// Equivalences as transformations (metamorphic testing): each rewrites a
// plain request into one a statement of the standards reads as the same
// request, so that the answer must be the plain request's, allowing for
// time (the oracle's Equivalent). No one has to foresee the bug: a server
// that reads the rewritten request otherwise shows it.
//
// Many transformations go into one request (group testing): when its
// answer is the plain one's, every one of them passed; when it differs,
// the set is split in two and each half sent again, until one
// transformation is blamed. Extra requests are spent only where something
// differed.

// Base is the plain request a transformation rewrites.
type Base string

const (
	BaseFeed   Base = "the feed with the Pro key"
	BaseVideos Base = "tracked videos with the Pro key"
	BaseHealth Base = "health without a key"
)

// Bases lists the plain requests, in the order they are packed.
var Bases = []Base{BaseFeed, BaseVideos, BaseHealth}

// Transformation is one statement of a standard that two requests mean
// the same, as a rewrite of a request.
type Transformation struct {
	// Name is stable: the ledger refers to it.
	Name string
	// Statement names the standard's statement: "RFC 9110 §5.1".
	Statement string
	// Text says what the statement says, in brief.
	Text string
	// Group: at most one transformation of a group goes in one request
	// (they write the same part of it, or cannot go together).
	Group string
	// On lists the plain requests it applies to.
	On    []Base
	apply func(d *draft)
}

// Applies reports whether the transformation rewrites a base.
func (t Transformation) Applies(b Base) bool { return slices.Contains(t.On, b) }

var (
	allBases  = []Base{BaseFeed, BaseVideos, BaseHealth}
	keyed     = []Base{BaseFeed, BaseVideos}
	withBody  = []Base{BaseVideos, BaseHealth}
	feedOnly  = []Base{BaseFeed}
	videoOnly = []Base{BaseVideos}
)

// Transformations lists every transformation, in a fixed order.
func Transformations() []Transformation {
	return []Transformation{
		{"header-names-lower-case", "RFC 9110 §5.1", "field names are case-insensitive", "names", allBases,
			func(d *draft) { d.names(strings.ToLower) }},
		{"header-names-upper-case", "RFC 9110 §5.1", "field names are case-insensitive", "names", allBases,
			func(d *draft) { d.names(strings.ToUpper) }},
		{"whitespace-around-field-values", "RFC 9112 §5.1", "whitespace before and after a field value is no part of it (a parser MUST exclude it)", "ows", allBases,
			func(d *draft) { d.values(func(v string) string { return " " + v + " \t" }) }},
		{"auth-scheme-lower-case", "RFC 9110 §11.1", "the authentication scheme is a case-insensitive token (and RFC 6750 §2.1's \"Bearer\", by RFC 5234 §2.3)", "scheme", keyed,
			func(d *draft) { d.scheme("bearer") }},
		{"auth-scheme-upper-case", "RFC 9110 §11.1", "the authentication scheme is a case-insensitive token", "scheme", keyed,
			func(d *draft) { d.scheme("BEARER") }},
		{"proxy-headers", "RFC 7239 §8.1", "forwarding fields can be forged by any client: they change no answer (the limit is per API key)", "proxy", allBases,
			func(d *draft) {
				// the client's address only: a forwarded host or scheme a
				// server may check against its own (and refuse), as a proxy
				// in front of it would
				for _, f := range proxyFields {
					d.add(f.Name, f.Value)
				}
			}},
		{"http-1.0", "RFC 9112 §2.3", "a server answers a request of HTTP/1.0, the same major version", "version", allBases,
			func(d *draft) { d.framing.HTTP10 = true }},
		{"chunked-body", "RFC 9112 §7.1", "a recipient MUST be able to parse the chunked transfer coding: the body it frames is the body (a server MAY refuse it with 411, RFC 9112 §6.3)", "version", withBody,
			func(d *draft) { d.framing.Chunked = true }},
		{"absolute-form-target", "RFC 9112 §3.2.2", "a server MUST accept the absolute-form of the request-target", "target", allBases,
			func(d *draft) { d.framing.Absolute = true }},
		{"query-value-percent-encoded", "RFC 3986 §2.3", "percent-encoded unreserved characters are equivalent to the characters (§6.2.2.2)", "query-value", feedOnly,
			func(d *draft) { d.query(false, percentUpper) }},
		{"query-name-percent-encoded", "RFC 3986 §6.2.2.2", "percent-encoded unreserved characters are equivalent to the characters", "query-name", feedOnly,
			func(d *draft) { d.query(true, percentUpper) }},
		{"query-percent-lower-case-hex", "RFC 3986 §6.2.2.1", "the hexadecimal digits of a percent-encoding are case-insensitive", "query-name", feedOnly,
			func(d *draft) { d.query(true, percentLower) }},
		{"expect-100-continue", "RFC 9110 §10.1.1", "a client may send Expect: 100-continue before its content: the server answers the request (a 100 first, or the final answer at once)", "expect", withBody,
			func(d *draft) { d.add("Expect", "100-continue") }},
		{"media-type-charset", "RFC 8259 §11", "no charset parameter is defined for application/json: adding one has no effect", "media", withBody,
			func(d *draft) { d.set("Content-Type", "application/json; charset=utf-8") }},
		{"media-type-case", "RFC 9110 §8.3.1", "the type and subtype of a media type are case-insensitive", "media", withBody,
			func(d *draft) { d.set("Content-Type", "Application/JSON") }},
		{"media-type-parameter-syntax", "RFC 9110 §5.6.6", "whitespace around ';' and a quoted parameter value are the same parameter", "media", withBody,
			func(d *draft) { d.set("Content-Type", `application/json ; charset="UTF-8"`) }},
		{"json-whitespace", "RFC 8259 §2", "insignificant whitespace is allowed before or after any structural character", "json-ws", withBody,
			func(d *draft) { d.body.spaced = true }},
		{"json-escaped-strings", "RFC 8259 §7", "any character may be escaped (\\uXXXX): the string is the characters", "json-strings", videoOnly,
			func(d *draft) { d.body.escapeValues = true }},
		{"json-escaped-member-names", "RFC 8259 §7", "a member name is a string: its escapes are its characters", "json-names", videoOnly,
			func(d *draft) { d.body.escapeNames = true }},
		{"accept-any", "RFC 9110 §12.5.1", "*/* accepts every media type, JSON included", "accept", allBases,
			func(d *draft) { d.set("Accept", "*/*") }},
		{"accept-json-with-weights", "RFC 9110 §12.5.1", "a list with weights that prefers JSON asks for JSON", "accept", allBases,
			func(d *draft) { d.set("Accept", "application/json;q=0.9, */*;q=0.1") }},
		{"no-accept", "RFC 9110 §12.5.1", "a request without Accept accepts any media type", "accept", allBases,
			func(d *draft) { d.del("Accept") }},
	}
}

// proxyFields claim the request came through a proxy from the loopback
// address: a server that trusts them may skip its key or its limit.
var proxyFields = []client.Field{{Name: "X-Forwarded-For", Value: "127.0.0.1"}, {Name: "X-Real-IP", Value: "127.0.0.1"}, {Name: "Forwarded", Value: "for=127.0.0.1"}}

// TransformationsOf lists the transformations that apply to a base.
func TransformationsOf(b Base) []Transformation {
	var out []Transformation
	for _, t := range Transformations() {
		if t.Applies(b) {
			out = append(out, t)
		}
	}
	return out
}

// Packs cuts a base's transformations into requests: each takes at most
// one of each group, the first of every group in the first pack.
func Packs(b Base) [][]Transformation {
	var packs [][]Transformation
	at := map[string]int{}
	for _, t := range TransformationsOf(b) {
		i := at[t.Group]
		at[t.Group]++
		for len(packs) <= i {
			packs = append(packs, nil)
		}
		packs[i] = append(packs[i], t)
	}
	return packs
}

// Plain is the base's request as the suite writes it.
func Plain(b Base, k Keys) (client.Request, bool) { return Transformed(b, k, nil) }

// Transformed is the base's request rewritten by each transformation, in
// the order given; false when the keys cannot make it.
func Transformed(b Base, k Keys, ts []Transformation) (client.Request, bool) {
	d, ok := plainDraft(b, k)
	if !ok {
		return client.Request{}, false
	}
	for _, t := range ts {
		if t.Applies(b) {
			t.apply(d)
		}
	}
	return d.request(), true
}

// plainLimit is the plain feed request's page size: small, so that the
// page is cheap, and not the default, so that a lost limit shows.
const plainLimit = "5"

func plainDraft(b Base, k Keys) (*draft, bool) {
	d := &draft{header: []client.Field{{Name: "Accept", Value: "application/json"}}}
	switch b {
	case BaseFeed:
		d.method, d.path = "GET", schemas.PathFeed
		d.pairs = [][2]string{{"limit", plainLimit}}
		if k.Cursor != "" {
			// a page of the key's walk: its cursor is a query value too
			d.pairs = append(d.pairs, [2]string{"cursor", url.QueryEscape(k.Cursor)})
		}
		d.add("Authorization", "Bearer "+k.Pro)
	case BaseVideos:
		d.method, d.path = "POST", schemas.PathVideos
		d.add("Authorization", "Bearer "+k.Pro)
		d.add("Content-Type", "application/json")
		ids := []string{k.Video, "~explored~"}
		if k.Video != "" {
			// and the feed's video in forms a collation or a normalization
			// folds to it: ids are compared as they are, so these are ids
			// of no video, listed missing (VIDEOS-MISSING judges it)
			for _, f := range []string{probe.SwapCase(k.Video), fullwidth(k.Video)} {
				if f != k.Video && !slices.Contains(ids, f) {
					ids = append(ids, f)
				}
			}
		}
		d.body = &jsonBody{ids: slices.DeleteFunc(ids, func(s string) bool { return s == "" })}
	case BaseHealth:
		d.method, d.path = "POST", schemas.PathHealth
		d.add("Content-Type", "application/json")
		d.body = &jsonBody{}
	default:
		return nil, false
	}
	return d, k.Pro != "" || b == BaseHealth
}

// draft is a request being written: header lines in order, the query's
// pairs, the body's parts and the framing.
type draft struct {
	method, path string
	header       []client.Field
	pairs        [][2]string // name, value: written as they are
	rawQuery     string      // the query as it is, when it is no pairs
	body         *jsonBody
	framing      client.Framing
}

func (d *draft) add(name, value string) {
	d.header = append(d.header, client.Field{Name: name, Value: value})
}

func (d *draft) set(name, value string) {
	for i, f := range d.header {
		if strings.EqualFold(f.Name, name) {
			d.header[i].Value = value
			return
		}
	}
	d.add(name, value)
}

func (d *draft) del(name string) {
	d.header = slices.DeleteFunc(d.header, func(f client.Field) bool { return strings.EqualFold(f.Name, name) })
}

func (d *draft) names(f func(string) string) {
	for i := range d.header {
		d.header[i].Name = f(d.header[i].Name)
	}
}

func (d *draft) values(f func(string) string) {
	for i := range d.header {
		d.header[i].Value = f(d.header[i].Value)
	}
}

// scheme writes the Authorization's scheme otherwise.
func (d *draft) scheme(s string) {
	for i, f := range d.header {
		if !strings.EqualFold(f.Name, "Authorization") {
			continue
		}
		v := strings.TrimLeft(f.Value, " \t")
		lead := f.Value[:len(f.Value)-len(v)]
		if scheme, rest, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
			d.header[i].Value = lead + s + " " + rest
		}
	}
}

// query percent-encodes the names or the values of the pairs.
//
// Only limit's name is encoded: a server that reads no encoded name then
// loses one parameter, not two, and one requirement says so.
func (d *draft) query(names bool, enc func(string) string) {
	for i, p := range d.pairs {
		switch {
		case names && p[0] == "limit":
			d.pairs[i][0] = enc(p[0])
		case names:
		default:
			d.pairs[i][1] = enc(p[1])
		}
	}
}

func percentUpper(s string) string { return percent(s, "%%%02X") }
func percentLower(s string) string { return percent(s, "%%%02x") }

// percent encodes the unreserved characters (RFC 3986 §2.3: ALPHA,
// DIGIT, "-", ".", "_", "~"), the only ones whose encoding means the
// same; the rest, percent-encodings included, stay as they are.
func percent(s, format string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			b.WriteString(s[i : i+3]) // already a percent-encoding
			i += 2
			continue
		}
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			fmt.Fprintf(&b, format, c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (d *draft) request() client.Request {
	r := client.Request{Method: d.method, Path: d.path, Header: slices.Clone(d.header), Accept: client.NoAccept, Framing: d.framing}
	q := make([]string, len(d.pairs))
	for i, p := range d.pairs {
		q[i] = p[0] + "=" + p[1]
	}
	r.Query = strings.Join(q, "&")
	if d.pairs == nil {
		r.Query = d.rawQuery
	}
	if d.body != nil {
		r.Body = []byte(d.body.text())
	}
	return r
}

// jsonBody is a body of one member, videoIds (none for health), written
// as the transformations ask.
type jsonBody struct {
	ids                       []string
	spaced                    bool
	escapeNames, escapeValues bool
	// raw, when set, is a JSON text to write again (a spec's body) in
	// place of videoIds
	raw []byte
}

func (b *jsonBody) text() string {
	if b.raw != nil {
		if !b.spaced && !b.escapeNames && !b.escapeValues {
			// no transformation of the body: its bytes as the spec wrote
			// them (whitespace around the value is a probe's input class)
			return string(b.raw)
		}
		if s, ok := rewriteJSON(b.raw, b.spaced, b.escapeNames, b.escapeValues); ok {
			// the whitespace around the text as the spec wrote it: a
			// padded body is a probe's input class of its own
			text := bytes.TrimLeft(b.raw, " \t\r\n")
			lead, trail := b.raw[:len(b.raw)-len(text)], text[len(bytes.TrimRight(text, " \t\r\n")):]
			return string(lead) + s + string(trail)
		}
		return string(b.raw)
	}
	ws := func(s string) string {
		if b.spaced {
			return " \n\t" + s + "\r\n "
		}
		return s
	}
	if b.ids == nil {
		return ws("{") + ws("}")
	}
	items := make([]string, len(b.ids))
	for i, id := range b.ids {
		items[i] = jsonString(id, b.escapeValues)
	}
	return ws("{") + jsonString("videoIds", b.escapeNames) + ws(":") + ws("[") + strings.Join(items, ws(",")) + ws("]") + ws("}")
}

// jsonString writes a JSON string, every character escaped if asked.
func jsonString(s string, escape bool) string {
	if !escape {
		// no escape but what JSON needs (not HTML's <, > and &)
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		_ = e.Encode(s)
		return strings.TrimSuffix(b.String(), "\n")
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, `\u%04x`, u)
	}
	b.WriteByte('"')
	return b.String()
}
