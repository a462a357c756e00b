package conformance

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/oracle"
)

// preflight asks the health operation and the first feed page with the Pro
// key, and says in one line what keeps the suite from judging the target,
// pointing at the likely cause: the URL, the server, TLS, the key.
func (s *Session) preflight(ctx context.Context) error {
	health, err := s.c.Cached(ctx, healthRequest())
	var cut *client.CutError
	switch {
	case errors.As(err, &cut):
		// the target answered, then its body broke off: the target is
		// there, and HEALTH-OK's specs judge the answer
		health = &client.Response{Request: healthRequest(), Status: cut.Status}
	case err != nil:
		return s.unreachable(err)
	}
	feed, err := s.c.Cached(ctx, feedRequest(nil, s.tg.Pro))
	if err != nil {
		return s.unreachable(err)
	}
	switch {
	case feed.Status == http.StatusNotFound:
		return fmt.Errorf("the target %s answered 404 to %s (and %d to %s): check the base URL and its path prefix, --target is what comes before %s",
			s.tg.URL, feed.Request, health.Status, health.Request, schemas.PathFeed)
	case feed.Status == http.StatusOK && !isJSON(feed) && !oracle.IsJSONMediaType(feed.Header.Get("Content-Type")):
		// a web page, not the API; a body that says it is JSON and is not
		// is the server's to answer for (FEED-PAGE-SCHEMA), not the run's
		return fmt.Errorf("the target %s answered 200 to %s with a body that is not JSON (Content-Type %q): is --target the API's base URL, and not a web page or a proxy's?",
			s.tg.URL, feed.Request, feed.Header.Get("Content-Type"))
	case feed.Status == http.StatusOK:
		return s.roles(ctx)
	case feed.Status == http.StatusUnauthorized || feed.Status == http.StatusForbidden:
		return fmt.Errorf("the Pro key (%s) is not accepted: %s answered %d, want 200: check --pro-key; body: %s",
			redact.Form(s.tg.Pro), feed.Request, feed.Status, feed.Excerpt())
	case feed.Status == http.StatusTooManyRequests:
		return fmt.Errorf("the target %s keeps rate-limiting the Pro key: %s: run again later; body: %s", s.tg.URL, feed, feed.Excerpt())
	}
	return fmt.Errorf("the target %s does not serve the feed to the Pro key (%s): %s answered %d, want 200; body: %s",
		s.tg.URL, redact.Form(s.tg.Pro), feed.Request, feed.Status, feed.Excerpt())
}

// roles checks that each key is in its role, in at most four requests, all
// of them requests that specs send anyway (the answers are reused): the
// Pro key gets tracked videos (200), the free key the feed (200) and not
// tracked videos (403), the revoked key no feed (401). A key in the wrong
// role makes every verdict that rests on it wrong: the run is refused,
// naming the flag. Where the answer could be the server's fault as well
// (a free key served tracked videos: no plan gate, or a Pro key), it only
// says so, and the specs judge it.
func (s *Session) roles(ctx context.Context) error {
	switch {
	case s.tg.Free != "" && s.tg.Free == s.tg.Pro:
		return refused("--free-key: the same key as --pro-key; give the key of a free account")
	case s.tg.Revoked != "" && (s.tg.Revoked == s.tg.Pro || s.tg.Revoked == s.tg.Free):
		return refused("--revoked-key: the same key as --pro-key or --free-key; give a key that was regenerated (revoked)")
	}
	// An exchange that gives no answer proves no role: the specs that send
	// the same request (the answer is kept) judge it.
	var stuck error // a limiter that does not release stops the run
	answer := func(req client.Request) *client.Response {
		resp, err := s.c.Cached(ctx, req)
		var nr *client.NotReleasedError
		if errors.As(err, &nr) && stuck == nil {
			stuck = s.unreachable(err)
		}
		if err != nil {
			return &client.Response{Request: req}
		}
		return resp
	}
	one := []string{inventedID(0, 24)}
	pro := answer(videosRequest(one, s.tg.Pro))
	free := &client.Response{}
	if s.tg.Free != "" {
		free = answer(videosRequest(one, s.tg.Free))
	}
	if stuck != nil {
		return stuck
	}
	if pro.Status == http.StatusForbidden {
		if free.Status == http.StatusOK {
			return refused("--pro-key and --free-key are swapped: tracked videos answered 403 to the Pro key (%s) and 200 to the free key (%s); give each flag the other key",
				redact.Form(s.tg.Pro), redact.Form(s.tg.Free))
		}
		return refused("--pro-key: the key is a free account's (tracked videos answered 403, a Pro plan is required: %s); give the key of a Pro account", pro.Excerpt())
	}
	// The free key's refusal proves a stale key only where the target
	// answers the Pro key's roles as the contract says.
	if s.tg.Free != "" && pro.Status == http.StatusOK {
		feed := answer(feedRequest(nil, s.tg.Free))
		if stuck != nil {
			return stuck
		}
		if feed.Status == http.StatusUnauthorized {
			return refused("--free-key: the key is not accepted (the feed answered 401: %s); give the current key of a free account", feed.Excerpt())
		}
		if free.Status == http.StatusOK && pro.Status == http.StatusOK {
			fmt.Fprintf(s.logWriter(), "note: tracked videos answered 200 to --free-key (%s): the key is a Pro account's, or the target has no plan gate (the PRO-GATE specs judge it)\n", redact.Form(s.tg.Free))
		}
	}
	if s.tg.Revoked != "" {
		if rev := answer(client.Get(schemas.PathFeed, nil, client.Bearer(s.tg.Revoked))); rev.Status == http.StatusOK {
			fmt.Fprintf(s.logWriter(), "note: the feed answered 200 to --revoked-key (%s): the key is still valid, or the target accepts revoked keys (the AUTH-REVOKED specs judge it)\n", redact.Form(s.tg.Revoked))
		}
	}
	return nil
}

// isJSON reports whether a body is JSON, whatever its Content-Type says.
func isJSON(resp *client.Response) bool {
	_, err := resp.JSON()
	return err == nil
}

// requestOf names the request of a client error.
func requestOf(err error) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.Request.String()
	}
	return "the request"
}

// unreachable explains an exchange that gave no answer, in one line.
func (s *Session) unreachable(err error) error {
	var (
		redirect *client.RedirectError
		timeout  *client.TimeoutError
		dns      *net.DNSError
		record   tls.RecordHeaderError
		unknown  x509.UnknownAuthorityError
		host     x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
	)
	url := s.tg.URL
	var stuck *client.NotReleasedError
	switch {
	case errors.As(err, &stuck):
		return fmt.Errorf("the target %s keeps rate-limiting: %v", url, err)
	case errors.As(err, &redirect):
		return fmt.Errorf("the target %s redirects: %v; give --target the URL the API answers at", url, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("nothing accepts connections at %s (connection refused, to %s): is the server running, and are the host and port of --target right?", url, requestOf(err))
	case errors.As(err, &dns):
		return fmt.Errorf("the host of %s is not found (%v): check --target", url, dns)
	case errors.As(err, &timeout):
		return fmt.Errorf("the target %s is too slow: %v", url, err)
	case errors.As(err, &record) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("the target %s does not speak TLS: use http:// if it serves plain HTTP (%v)", url, err)
	case errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &verify):
		return fmt.Errorf("the TLS certificate of %s is not trusted: check the host name of --target and the server's certificate chain (%v)", url, err)
	case strings.Contains(err.Error(), "tls: "):
		return fmt.Errorf("the TLS handshake with %s failed: %v", url, err)
	}
	return fmt.Errorf("the target %s gives no answer to judge: %v", url, err)
}
