package conformance

import (
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
)

// credential is one Authorization header a spec sends.
type credential struct {
	name string
	id   catalogue.ID                    // the requirement it checks
	auth func(t Target) (string, string) // header value, or a skip reason
}

// The credentials that must get 401; strict specs pick some by name.
const (
	noHeader   = "no Authorization header"
	noPrefix   = "a token without the key prefix"
	unknownKey = "a well-formed key that belongs to no account"
)

func credentials() []credential {
	return []credential{
		{noHeader, catalogue.AuthMissing, func(Target) (string, string) { return "", "" }},
		{"an empty bearer token", catalogue.AuthMalformed, func(Target) (string, string) { return "Bearer ", "" }},
		{"a scheme other than Bearer (with the valid Pro key)", catalogue.AuthMalformed, func(t Target) (string, string) {
			return "Token " + t.Pro, ""
		}},
		{noPrefix, catalogue.AuthMalformed, func(t Target) (string, string) { return "Bearer " + t.unprefixedToken(), "" }},
		{unknownKey, catalogue.AuthUnknown, func(t Target) (string, string) { return "Bearer " + t.unknownKey(), "" }},
		// Keys compared loosely: case folded, or by prefix.
		{"the Pro key with the case of its letters swapped", catalogue.AuthUnknown, func(t Target) (string, string) { return "Bearer " + t.swappedKey(), "" }},
		{"the Pro key with a character added", catalogue.AuthUnknown, func(t Target) (string, string) { return "Bearer " + t.longerKey(), "" }},
		{"the Pro key without its last character", catalogue.AuthUnknown, func(t Target) (string, string) { return "Bearer " + t.shorterKey(), "" }},
		{"the revoked key", catalogue.AuthRevoked, func(t Target) (string, string) {
			if t.Revoked == "" {
				return "", needs("revoked-key")
			}
			return client.Bearer(t.Revoked), ""
		}},
	}
}

func credentialNamed(name string) credential {
	for _, c := range credentials() {
		if c.name == name {
			return c
		}
	}
	panic("no credential " + name)
}

// authRequest is the request of one operation with one credential.
func (s *suite) authRequest(op string, cr credential) (client.Request, string) {
	auth, skip := cr.auth(s.tg)
	if op == "feed" {
		return client.Get(schemas.PathFeed, nil, auth), skip
	}
	// a valid body, so that the key is the only thing wrong
	return client.PostJSON(schemas.PathVideos, oneInventedID(), auth), skip
}

// authSpecs: a missing, malformed, unknown or revoked key gets 401 on
// both operations that need one; the valid key gets 200.
func (s *suite) authSpecs() {
	for _, op := range []string{"feed", "videos"} {
		path := map[string]string{"feed": "GET " + schemas.PathFeed, "videos": "POST " + schemas.PathVideos}[op]
		Describe(path, func() {
			for _, cr := range credentials() {
				It("answers "+cr.name+" with 401 and an ErrorBody", requires(cr.id, catalogue.ErrorBody), func(ctx SpecContext) {
					req, skip := s.authRequest(op, cr)
					if skip != "" {
						skipMissing(skip)
					}
					s.need(s.fetch(ctx, req), http.StatusUnauthorized)
				})
			}
			It("answers the valid Pro key with 200", requires(catalogue.AuthValid), func(ctx SpecContext) {
				req := feedRequest(nil, s.tg.Pro)
				if op == "videos" {
					req = videosRequest([]string{inventedID(0, 24)}, s.tg.Pro)
				}
				resp := s.fetch(ctx, req)
				if resp.Status == http.StatusBadRequest {
					// the body's rules refused it, not the key
					s.Block(fmt.Sprintf("%s answered 400 to a valid body (judged by the body's rules): %s", resp.Request, resp.Excerpt()))
				}
				s.need(resp, http.StatusOK)
			})
		})
	}
	s.hiddenAuthSpecs()
}
