package simulator

import (
	"encoding/hex"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	redactpkg "github.com/tcmkit/tcmkit/schemas/redact"
)

// A key that a client sends encoded (percent-encoding, base64 or
// base64url, HTML character references, \u escapes) or without its
// prefix is still a key: the journal, the log and what the judge quotes
// redact it, and the judge counts it where it was sent. Package
// schemas/redact finds and decodes the encoded runs, for the suite and
// the simulator alike.

// redactEncoded replaces each encoded run of text whose decoded text holds
// a key (by its hint) or a piece of a key the keyring knows (by "…"), and
// says whether it replaced one. A text with nothing encoded in it, as
// most paths and queries are, costs one scan.
func (s *Server) redactEncoded(text string) (string, bool) {
	if !redactpkg.MayHideEncoded(text) {
		return text, false
	}
	return redactpkg.ReplaceEncoded(text, s.holdsKey)
}

// holdsKey says whether a decoded text holds a key or a piece of a known
// one, and what its run becomes.
func (s *Server) holdsKey(decoded string) (string, bool) {
	if k := s.keyIn(decoded); k != "" {
		return redact(k), true
	}
	if s.hidePieces(decoded) != decoded {
		return "…", true
	}
	return "", false
}

// keyIn is the first key of the prefix in text, "" if none.
func (s *Server) keyIn(text string) string {
	if !strings.Contains(text, s.keyMarker) {
		return ""
	}
	return s.keyPattern.FindString(text)
}

// hiddenKeys appends to out the keys of text that keysSeen does not see
// as such: encoded ones, and pieces of known keys (a secret without its
// prefix), which are named by no id. It searches the first maxRedactText
// bytes of text.
func (s *Server) hiddenKeys(out []KeySeen, where, text string) []KeySeen {
	if len(out) >= maxKeysSeen {
		return out
	}
	text = head(text)
	if redactpkg.MayHideEncoded(text) {
		redactpkg.ReplaceEncoded(text, func(decoded string) (string, bool) {
			form, ok := s.holdsKey(decoded)
			if ok && len(out) < maxKeysSeen {
				ks := KeySeen{Where: where, KeyHint: "a piece of a key (…)"}
				if k := s.keyIn(decoded); k != "" {
					h := hashKey(k)
					ks.KeyID, ks.KeyHint = hex.EncodeToString(h[:8]), redact(k)
				}
				out = append(out, ks)
			}
			return form, ok
		})
	}
	if len(out) < maxKeysSeen {
		if plain := s.redactWhole(text); s.hidePieces(plain) != plain {
			out = append(out, KeySeen{Where: where, KeyHint: "a piece of a key (…)"})
		}
	}
	return out
}

// apiPath: the path of an operation, which holds no key (most requests
// have one, and need not be searched).
func apiPath(p string) bool {
	return p == schemas.PathFeed || p == schemas.PathVideos || p == schemas.PathHealth
}
