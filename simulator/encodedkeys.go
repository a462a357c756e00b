package simulator

import (
	"encoding/hex"

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
	return st.keys.hideFragments(text, st.keys.formLocked)
}

// redactHeader is redactKeys for a header value (see
// keyring.hideHeaderFragments).
func (s *Server) redactHeader(text string) string {
	text = s.redactWhole(text)
	if st := s.st.Load(); st != nil {
		text, _ = st.keys.hideHeaderFragments(text, st.keys.formLocked)
	}
	return text
}

// formLocked is what a span that decoded to the letters and digits
// decoded becomes: a whole key's hint, or "…". The caller holds k.mu (it
// runs inside hideFragments).
func (k *keyring) formLocked(decoded string) string {
	if key := k.wholeKeyLocked(decoded); key != "" {
		return hint(key)
	}
	return "…"
}

// wholeKeyLocked is the key a span decoded to, when it holds one the
// keyring issued whole: its random part wherever it stands among the
// letters and digits decoded (Basic credentials decode to "user:key" or
// "key:password"), the last ones first; "" otherwise: the finder compares
// letters up to case, and a key in another case is no key to name. The
// caller holds k.mu.
func (k *keyring) wholeKeyLocked(decoded string) string {
	for i := len(decoded) - KeyRandomLen; i >= 0 && len(decoded)-KeyRandomLen-i < maxKeyWindows; i-- {
		key := k.prefix + "_" + decoded[i:i+KeyRandomLen]
		if _, ok := k.byHash[hashKey(key)]; ok {
			return key
		}
	}
	return ""
}

// maxKeyWindows bounds the places of a decoded span that wholeKeyLocked tries
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
			if k := st.keys.wholeKeyLocked(decoded); k != "" {
				h := hashKey(k)
				ks.KeyID, ks.KeyHint, ks.Account = hex.EncodeToString(h[:8]), hint(k), st.keys.byHash[h].Account
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
