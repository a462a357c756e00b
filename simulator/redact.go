package simulator

import (
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
)

// Keys where they should not be: what the server redacts before it
// journals, logs or hands to observers what a client sent, and the keys
// it finds outside the Authorization header (Exchange.KeysSeen).

// RedactKeys replaces every key of the server's prefix in text by its
// hint (tcm_…#3f9a): for what is written out of what clients sent.
func (s *Server) RedactKeys(text string) string { return s.redactKeys(text) }

// redactKeys replaces every key-shaped string of s (the prefix, an
// underscore, 32 letters or digits) by its hint, and every piece of a key
// the keyring knows (see keepFragments), in any encoding the kit's finder
// reads, by its hint when whole and "…" otherwise.
func (s *Server) redactKeys(text string) string {
	text, _ = s.hideKeys(s.redactWhole(text))
	return text
}

// redactWhole replaces the key-shaped strings of text only.
func (s *Server) redactWhole(text string) string {
	if !strings.Contains(text, s.keyMarker) {
		return text
	}
	return s.keyPattern.ReplaceAllStringFunc(text, hint)
}

// redactURL redacts keys in a request's path and query for the log and
// the journal, also a key whose characters were percent-encoded, and says
// whether it found one.
func (s *Server) redactURL(path, rawQuery string) (string, string, bool) {
	p, q := path, s.redactWhole(rawQuery)
	if !apiPath(path) { // an operation's path holds no key
		p = s.redactKeys(path)
	}
	found := p != path || q != rawQuery
	if strings.ContainsAny(q, "%+") {
		if dec, err := url.QueryUnescape(q); err != nil || s.keyPattern.MatchString(dec) {
			var hit bool
			q, hit = s.redactEscaped(q)
			found = found || hit
		}
	}
	q, hit := s.hideKeys(q) // after whole keys, which keep their hint
	return p, q, found || hit
}

// redactEscaped rewrites each parameter of a query whose decoded name or
// value holds a key, decoded, redacted and encoded again. A parameter that
// does not decode is replaced whole: it might hide a key.
func (s *Server) redactEscaped(q string) (string, bool) {
	found := false
	parts := strings.Split(q, "&")
	for i, seg := range parts {
		name, value, _ := strings.Cut(seg, "=")
		dn, err1 := url.QueryUnescape(name)
		dv, err2 := url.QueryUnescape(value)
		switch {
		case err1 != nil || err2 != nil:
			parts[i] = "…"
		case s.keyPattern.MatchString(dn) || s.keyPattern.MatchString(dv):
			parts[i] = url.QueryEscape(s.redactKeys(dn)) + "=" + url.QueryEscape(s.redactKeys(dv))
			found = true
		}
	}
	return strings.Join(parts, "&"), found
}

// maxKeysSeen bounds Exchange.KeysSeen.
const maxKeysSeen = 4

// seen is a whole key found where: its id, hint and account.
func (s *Server) seen(where, key string) KeySeen {
	h := hashKey(key)
	ks := KeySeen{Where: where, KeyID: hex.EncodeToString(h[:8]), KeyHint: hint(key)}
	if st := s.st.Load(); st != nil {
		ks.Account = st.keys.accountOf(h)
	}
	return ks
}

// keysSeen finds the keys of a request outside a well-formed
// Authorization header: in every part of the request target (the path,
// the query raw and decoded, the userinfo of an absolute-form target, the
// host), the body, the other headers ("header", "cookie", "referer"), and
// the Authorization header itself when it is not Bearer <key> (badAuth:
// Basic credentials decoded, as any encoding the finder reads).
// urlClean: the journal's redaction of the path and query (journalURL)
// found no key nor piece of one there, so they are not searched again.
// knownBody: the body is a plain list of the world's own ids (call), so no
// key nor piece of one is in it.
func (s *Server) keysSeen(r *http.Request, body []byte, badAuth, urlClean, knownBody bool) []KeySeen {
	var out []KeySeen
	add := func(where, text string) {
		if len(out) >= maxKeysSeen || !strings.Contains(text, s.keyMarker) {
			return
		}
		for _, k := range s.keyPattern.FindAllString(text, maxKeysSeen-len(out)) {
			out = append(out, s.seen(where, k))
		}
	}
	if badAuth {
		for _, v := range r.Header["Authorization"] {
			add("authorization", v)
			out = s.hiddenHeaderKeys(out, "authorization", v)
		}
	}
	// The parts of the request target beside the path and the query: a
	// userinfo (http://user:key@host/…, sent as an absolute-form target)
	// and the host (the target's, or the Host header's).
	if u := r.URL.User; u != nil {
		pass, _ := u.Password()
		add("userinfo", u.Username()+":"+pass)
		out = s.hiddenHeaderKeys(out, "userinfo", u.String())
	}
	add("host", r.Host) // an absolute-form target's host, else the Host header's
	out = s.hiddenHeaderKeys(out, "host", r.Host)
	add("path", r.URL.Path)
	q := r.URL.RawQuery
	if dec, err := url.QueryUnescape(q); err == nil && dec != q {
		q = dec
	}
	add("query", q)
	if !knownBody {
		add("body", string(body))
	}
	if !urlClean {
		if !apiPath(r.URL.Path) {
			out = s.hiddenKeys(out, "path", r.URL.Path)
		}
		out = s.hiddenKeys(out, "query", r.URL.RawQuery)
	}
	if !knownBody {
		out = s.hiddenKeys(out, "body", string(body))
	}
	for name, vs := range r.Header {
		where := "header"
		switch name {
		case "Authorization":
			continue
		case "Cookie":
			where = "cookie"
		case "Referer":
			where = "referer" // a URL: the judge counts it as one
		}
		for _, v := range vs {
			add(where, v)
			out = s.hiddenHeaderKeys(out, where, v)
		}
		// A key in the header's name, which the server has put in its
		// canonical case: the key up to case, a key in a header all the
		// same.
		if len(name) > 8 { // redact.MinSecret
			out = s.hiddenHeaderKeys(out, "header", name)
		}
	}
	return out
}

// issuedFeedQuery says whether a feed request's query is a limit and a
// cursor this server handed to the key's account, and nothing else: such a
// query holds no key nor piece of one, so the journal need not search it
// (a client that hides a key in a cursor sends a cursor the server did
// not issue).
func (s *Server) issuedFeedQuery(c *call, r *http.Request, accountID string) bool {
	if c.operation() != OpFeed || r.URL.Path != schemas.PathFeed || accountID == "" {
		return false
	}
	cursor := ""
	for part := range strings.SplitSeq(r.URL.RawQuery, "&") {
		name, value, _ := strings.Cut(part, "=")
		switch {
		case name == "limit" && value != "" && len(value) <= 4 && strings.Trim(value, "0123456789") == "":
		case name == "cursor" && cursor == "" && value != "":
			cursor = value
		default:
			return false
		}
	}
	return cursor == "" || s.st.Load().world.IssuedCursor(accountID, cursor)
}
