package client

import (
	"fmt"
	"net/url"

	"github.com/tcmkit/tcmkit/schemas/redact"
)

// CheckTarget says what keeps raw from being a target a key may be sent
// to, before any request: it must be an http(s) scheme://host[:port] with
// an optional base path, without a user (user:key@host), a query or a
// fragment (where keys are put by mistake, and which a base URL has no
// use for), and its host must hold none of keys (KEY.localhost sends the
// key to the DNS resolver). The error quotes raw with any key redacted.
func CheckTarget(raw string, keys ...string) error {
	return CheckTargetRedacted(raw, redact.New(keys...))
}

// CheckTargetRedacted is CheckTarget with a redactor that knows the keys
// already: building one is a twentieth of a run against the bundled
// simulator, and a session has one.
func CheckTargetRedacted(raw string, red *redact.Redactor) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("--target %q: not a URL", red.String(raw))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("--target %q: not an http:// or https:// URL", red.String(u.Redacted()))
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawFragment != "":
		// Quoted without its password: an error line is no place for it.
		return fmt.Errorf("--target %q: want scheme://host[:port][/base path], without user, query or fragment", red.String(u.Redacted()))
	case red.String(u.Host) != u.Host:
		return fmt.Errorf("--target %q: its host holds a key; a key goes in --pro-key, never in the URL (a host name goes to the DNS resolver)", red.String(u.Redacted()))
	}
	return nil
}
