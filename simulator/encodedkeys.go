package simulator

import (
	"github.com/tcmkit/tcmkit/schemas"
)

// A key that a client sends encoded (percent-encoding, base64, HTML
// character references, \u escapes, stacked, its characters joined by
// anything) or without its prefix is still a key: the journal, the log and
// what the judge quotes redact it, and the judge counts it where it was
// sent. The keyring finds them with the kit's one fragment finder
// (redact.FragmentSet, which the suite's redactor uses too).

// hideKeys replaces each span of text that holds a piece of a known key,
// in any encoding the finder reads, by the key's hint when it holds the
// key whole, by "…" otherwise, and says whether it replaced one.
func (s *Server) hideKeys(text string) (string, bool) {
	st := s.st.Load()
	if st == nil {
		return text, false
	}
	return st.keys.hideFragments(text, s.keyForm)
}

// redactHeader is redactKeys for a header value (see
// keyring.hideHeaderFragments).
func (s *Server) redactHeader(text string) string {
	text = s.redactWhole(text)
	if st := s.st.Load(); st != nil {
		text, _ = st.keys.hideHeaderFragments(text, s.keyForm)
	}
	return text
}

// keyForm is what a span that decoded to the letters and digits decoded
// becomes: a whole key's hint, or "…".
func (s *Server) keyForm(decoded string) string {
	if k := s.wholeKey(decoded); k != "" {
		return hint(k)
	}
	return "…"
}

// wholeKey is the key a span decoded to, when it holds one whole: a key
// the keyring holds, wherever its random part stands among the letters
// and digits decoded (Basic credentials decode to "user:key" or
// "key:password"), else the last KeyRandomLen of them; "" when fewer.
func (s *Server) wholeKey(decoded string) string {
	if len(decoded) < KeyRandomLen {
		return ""
	}
	if st := s.st.Load(); st != nil && len(decoded) > KeyRandomLen {
		for i := 0; i+KeyRandomLen <= len(decoded) && i < maxKeyWindows; i++ {
			if k := s.cfg.KeyPrefix + "_" + decoded[i:i+KeyRandomLen]; st.keys.accountOf(hashKey(k)) != "" {
				return k
			}
		}
	}
	return s.cfg.KeyPrefix + "_" + decoded[len(decoded)-KeyRandomLen:]
}

// maxKeyWindows bounds the places of a decoded span that wholeKey tries
// (a hash each).
const maxKeyWindows = 256

// hiddenKeys appends to out the keys of text that keysSeen does not see
// as such: encoded ones, and pieces of known keys (a secret without its
// prefix), which are named by no id. It searches the first maxRedactText
// bytes of text.
func (s *Server) hiddenKeys(out []KeySeen, where, text string) []KeySeen {
	return s.findHidden(out, where, text, false)
}

// hiddenHeaderKeys is hiddenKeys for a header value (see
// keyring.hideHeaderFragments).
func (s *Server) hiddenHeaderKeys(out []KeySeen, where, text string) []KeySeen {
	return s.findHidden(out, where, text, true)
}

func (s *Server) findHidden(out []KeySeen, where, text string, header bool) []KeySeen {
	if len(out) >= maxKeysSeen {
		return out
	}
	st := s.st.Load()
	if st == nil {
		return out
	}
	hide := st.keys.hideFragments
	if header {
		hide = st.keys.hideHeaderFragments
	}
	hide(s.redactWhole(head(text)), func(decoded string) string {
		if len(out) < maxKeysSeen {
			ks := KeySeen{Where: where, KeyHint: "a piece of a key (…)"}
			if k := s.wholeKey(decoded); k != "" {
				ks = s.seen(where, k)
			}
			out = append(out, ks)
		}
		return ""
	})
	return out
}

// apiPath: the path of an operation, which holds no key (most requests
// have one, and need not be searched).
func apiPath(p string) bool {
	return p == schemas.PathFeed || p == schemas.PathVideos || p == schemas.PathHealth
}
