package probe

import "strings"

// The keys derived from a valid key: a bad role's key is invented (the
// role's own), or made from the Pro key by one change, because a server
// that repairs a key before it looks it up (re-adds a prefix, folds case,
// strips quotes) accepts these and refuses every invented one. A derived
// key is as secret as the key it is made from: the suite redacts it, and
// its curl lines spell it as a shell expression of $TCM_PRO_KEY (Shell).
// Each form belongs to the role its requirement names: a token that does
// not start with <KEY_PREFIX>_ is malformed (AUTH-MALFORMED); one that
// does and belongs to no account is unknown (AUTH-UNKNOWN).

// KeyForm is how a probe's key is made from the Pro key; "" is the role's
// own key.
type KeyForm string

// The forms.
const (
	Own            KeyForm = ""
	NoPrefix       KeyForm = "no-prefix"       // its random part alone: the prefix and underscore removed
	PrefixCase     KeyForm = "prefix-case"     // the prefix's letters in the other case
	OtherPrefix    KeyForm = "other-prefix"    // another word before the underscore
	OtherSeparator KeyForm = "other-separator" // a hyphen for the underscore
	Quoted         KeyForm = "quoted"          // the key in double quotes
	SecretCase     KeyForm = "secret-case"     // the random part's letters in the other case
	PrefixTwice    KeyForm = "prefix-twice"    // the prefix and underscore written twice
)

// KeyForms lists the derived forms, malformed ones first.
var KeyForms = []KeyForm{NoPrefix, PrefixCase, OtherPrefix, OtherSeparator, Quoted, SecretCase, PrefixTwice}

// Role is the role whose requirement a form's key answers to.
func (f KeyForm) Role() Role {
	switch f {
	case SecretCase, PrefixTwice:
		return Unknown
	case Own:
		return ""
	}
	return Malformed
}

// Says names the form for people.
func (f KeyForm) Says() string {
	return map[KeyForm]string{
		NoPrefix:       "the Pro key without its prefix",
		PrefixCase:     "the Pro key with its prefix in the other case",
		OtherPrefix:    "the Pro key under another prefix",
		OtherSeparator: "the Pro key with a hyphen for its underscore",
		Quoted:         "the Pro key in double quotes",
		SecretCase:     "the Pro key with its random part in the other case",
		PrefixTwice:    "the Pro key with its prefix twice",
	}[f]
}

// otherWord is the prefix OtherPrefix puts in place of the key's.
func otherWord(prefix string) string {
	if strings.EqualFold(prefix, "key") {
		return "api"
	}
	return "key"
}

// SwapCase swaps the case of ASCII letters (keys are ASCII; tr does the
// same in Shell's expressions).
func SwapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

// Derive makes the form's key from key (<prefix>_<random>); false when
// the key has no such parts or the form would not change it.
func (f KeyForm) Derive(key string) (string, bool) {
	prefix, random, ok := strings.Cut(key, "_")
	if !ok || prefix == "" || random == "" {
		return "", false
	}
	var out string
	switch f {
	case NoPrefix:
		out = random
	case PrefixCase:
		out = SwapCase(prefix) + "_" + random
	case OtherPrefix:
		out = otherWord(prefix) + "_" + random
	case OtherSeparator:
		out = prefix + "-" + random
	case Quoted:
		out = `"` + key + `"`
	case SecretCase:
		out = prefix + "_" + SwapCase(random)
	case PrefixTwice:
		out = prefix + "_" + key
	default:
		return "", false
	}
	return out, out != key
}

// Shell spells the form's key as a POSIX shell expression of the
// variable v holding key, for use inside double quotes (a curl line's
// header): the derived key never appears in clear.
func (f KeyForm) Shell(v, key string) string {
	prefix, _, _ := strings.Cut(key, "_")
	head, rest := "${"+v+"%%_*}", "${"+v+"#*_}"
	swap := func(s string) string { return `$(printf %s "` + s + `" | tr a-zA-Z A-Za-z)` }
	switch f {
	case NoPrefix:
		return rest
	case PrefixCase:
		return swap(head) + "_" + rest
	case OtherPrefix:
		return otherWord(prefix) + "_" + rest
	case OtherSeparator:
		return head + "-" + rest
	case Quoted:
		return `\"$` + v + `\"`
	case SecretCase:
		return head + "_" + swap(rest)
	case PrefixTwice:
		return head + "_$" + v
	}
	return ""
}
