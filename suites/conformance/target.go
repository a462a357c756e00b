package conformance

import (
	"strings"
	"unicode"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// Target is what a run judges: the server's base URL and the keys to send,
// as the Config names them or as Run provisioned them on the bundled
// simulator. With -p, process 1 hands it to the others (as JSON).
type Target struct {
	URL                string
	Pro, Free, Revoked string
	// Burst and Other are the rate-limit specs' keys (see Config.BurstKey
	// and Config.OtherKey); empty picks them from the others.
	Burst, Other string
	// ControlClock: move the target's clock through its control API.
	ControlClock bool
	// Secrets are keys issued for the run beyond those above, for the redactor.
	Secrets []string
}

// keys are the keys the run sends (some may be empty).
func (t Target) keys() []string { return []string{t.Pro, t.Free, t.Revoked, t.Burst, t.Other} }

// validate says what keeps the suite from judging the target; red, when
// not nil, is a redactor that knows its keys.
func (t Target) validate(red *redact.Redactor) []string {
	var errs []string
	if t.URL == "" {
		errs = append(errs, "no target: give --target URL (or TCM_TARGET)")
	} else {
		if red == nil {
			red = redact.New(t.keys()...)
		}
		if err := client.CheckTargetRedacted(t.URL, red); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if t.Pro == "" {
		errs = append(errs, "no Pro key: give --pro-key KEY (or TCM_PRO_KEY)")
	}
	return errs
}

// KeyPrefix is the key prefix the target uses, derived from the Pro key:
// everything before its first underscore ("" if it has none).
func (t Target) KeyPrefix() string {
	p, _, ok := strings.Cut(t.Pro, "_")
	if !ok {
		return ""
	}
	return p
}

// invented returns n fixed characters of the key alphabet, so that runs
// are repeatable.
func invented(n int) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[(i*7+3)%len(alnum)]
	}
	return string(b)
}

// unknownKey is a well-formed key (the Pro key's prefix and length) that
// belongs to no account.
func (t Target) unknownKey() string {
	n := 32
	if _, r, ok := strings.Cut(t.Pro, "_"); ok && len(r) >= 8 {
		n = len(r)
	}
	return t.KeyPrefix() + "_" + invented(n)
}

// swappedKey is the Pro key with the case of the letters after its prefix
// swapped, longerKey has one character more, shorterKey one fewer: none is
// the key, and each is as secret as the key (redacted like it).
func (t Target) swappedKey() string {
	i := strings.IndexByte(t.Pro, '_') + 1
	return t.Pro[:i] + strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, t.Pro[i:])
}

func (t Target) longerKey() string { return t.Pro + "A" }

func (t Target) shorterKey() string { return t.Pro[:max(len(t.Pro)-1, 0)] }

// derived are the keys made from the Pro key, for the redactor: the
// hand-written specs' and the probes' (probe.KeyForms).
func (t Target) derived() []string {
	if t.Pro == "" {
		return nil
	}
	out := []string{t.swappedKey(), t.longerKey(), t.shorterKey()}
	for _, f := range probe.KeyForms {
		if k, ok := f.Derive(t.Pro); ok {
			out = append(out, k)
		}
	}
	return out
}

// derivedVar spells a probe's key derived from the Pro key as a shell
// expression of $TCM_PRO_KEY ("" when token is none of them).
func (t Target) derivedVar(token string) string {
	for _, f := range probe.KeyForms {
		if k, ok := f.Derive(t.Pro); ok && k == token {
			return f.Shell("TCM_PRO_KEY", t.Pro)
		}
	}
	return ""
}

// unprefixedToken is a token as long as the Pro key without its prefix.
func (t Target) unprefixedToken() string { return invented(len(t.Pro)) }

func (t Target) burstKey() string {
	switch {
	case t.Burst != "":
		return t.Burst
	case t.Free != "":
		return t.Free
	}
	return t.Pro
}

func (t Target) otherKey() string {
	switch {
	case t.Other != "":
		return t.Other
	case t.burstKey() != t.Pro:
		return t.Pro
	}
	return t.Free
}

// paramKey sends the feed requests with bad parameters. The rule does not
// depend on the plan, and the free key (when given) has room to spare once
// the rate-limit burst has left its window, while the Pro key's window is
// filled by the cursor walks; spreading them keeps a run near its floor.
func (t Target) paramKey() string {
	if t.Free != "" {
		return t.Free
	}
	return t.Pro
}
