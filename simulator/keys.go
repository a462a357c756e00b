package simulator

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tcmkit/tcmkit/schemas/redact"
)

// KeyRandomLen is the length of the random part of a key.
const KeyRandomLen = 32

const keyAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Keys are the whole keys of the seeded accounts.
type Keys struct {
	Pro     string // a Pro account's key
	Free    string // a free account's key
	Revoked string // the first key of a third (Pro) account, since regenerated: 401
}

// keyHash is what the keyring stores instead of a key: lookups hash the
// presented key first, so neither the map nor the timing of a lookup says
// anything about the keys it holds.
type keyHash [sha256.Size]byte

func hashKey(key string) keyHash { return sha256.Sum256([]byte(key)) }

// hashedKey is a key with its hash, while one request is served; it is
// never written anywhere.
type hashedKey struct {
	header string // the Authorization header it was read from
	hash   keyHash
}

type keyEntry struct {
	Account string
	Revoked bool
}

// keyring maps key hashes to accounts. Keys are generated from its
// keyGen and a counter: the seeded world's from its seed, so the same seed
// gives the same keys; a served recording's from a fresh salt, so that no
// other world hands them out. A key is issued once: the counter only
// grows, and a key the keyring holds already (valid or revoked) is never
// handed out again.
type keyring struct {
	prefix string
	gen    keyGen

	mu      sync.RWMutex
	counter uint64
	byHash  map[keyHash]keyEntry
	current map[string]keyHash // account id → hash of its one valid key
	hints   map[string]string  // account id → redacted form of that key

	// The fragments of the last maxFragmentKeys keys issued, kept by hash
	// (a fragment kept as such would give the key away) in the one
	// fragment finder of the kit (redact.FragmentSet): every run of
	// redact.MinSecret characters of a key's random part, hidden wherever
	// it stands and however it was encoded, as a key that a client cut,
	// encoded or half pasted into a URL is still a secret.
	frags    *redact.FragmentSet
	fragKeys [][]uint64 // per kept key, its fragments' hashes, oldest first

	// clean holds header values found to hold no fragment
	// (hideHeaderFragments): a client sends the same ones on every
	// request ("application/json"), and each search costs microseconds.
	// Emptied whenever fragments are added, and when it is full.
	clean      sync.Map // string → struct{}
	cleanCount atomic.Int32
}

// A header value of at most maxCleanText bytes may be kept in
// keyring.clean, which holds at most maxCleanTexts of them (128 KB).
const (
	maxCleanText  = 128
	maxCleanTexts = 1024
)

// maxFragmentKeys bounds the keys whose fragments are known (about 4 KB
// each: each fragment as it stands and up to case).
const maxFragmentKeys = 4096

// keyGen is where a keyring's keys come from: the n-th key of a seed, or
// of a random salt when salt is set (the seed is then not used).
type keyGen struct {
	seed int64
	salt *[32]byte
}

// freshSalt is a keyGen's salt no other world has: keys made from it are
// fresh.
func freshSalt() *[32]byte {
	var s [32]byte
	if _, err := rand.Read(s[:]); err != nil {
		panic("simulator: no randomness for fresh keys: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return &s
}

func newKeyring(prefix string, gen keyGen) *keyring {
	return &keyring{prefix: prefix, gen: gen, byHash: map[keyHash]keyEntry{}, current: map[string]keyHash{}, hints: map[string]string{},
		frags: redact.NewFragmentSet()}
}

// keepFragments remembers the fragments of key. The caller holds k.mu.
func (k *keyring) keepFragments(key string) {
	if len(k.fragKeys) == maxFragmentKeys {
		k.frags.Remove(k.fragKeys[0])
		k.fragKeys = k.fragKeys[1:]
	}
	k.fragKeys = append(k.fragKeys, k.frags.Add(key))
	k.forgetClean() // a value clean before may hold a piece of key
}

// forgetClean empties keyring.clean.
func (k *keyring) forgetClean() {
	k.clean.Clear()
	k.cleanCount.Store(0)
}

// hideFragments replaces every span of text that holds a piece of
// redact.MinSecret or more characters of a known key, in any encoding the
// redactor promises, by form of the letters and digits it decoded to.
func (k *keyring) hideFragments(text string, form func(decoded string) string) (string, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.frags.Replace(text, form)
}

// hideHeaderFragments is hideFragments for a header value, which is
// searched once while the fragments stay the same: a value that holds
// none is kept in k.clean. The search and the keeping happen under the
// read lock, so no fragment can be added in between.
func (k *keyring) hideHeaderFragments(text string, form func(decoded string) string) (string, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if len(text) > maxCleanText {
		return k.frags.Replace(text, form)
	}
	if _, ok := k.clean.Load(text); ok {
		return text, false
	}
	out, found := k.frags.Replace(text, form)
	if !found {
		if k.cleanCount.Load() >= maxCleanTexts {
			k.forgetClean() // values of requests long gone: start again
		}
		if _, had := k.clean.LoadOrStore(text, struct{}{}); !had {
			k.cleanCount.Add(1)
		}
	}
	return out, found
}

func isKeyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// generate derives the n-th key of the keyring's keyGen.
func (k *keyring) generate(n uint64) string { return k.gen.key(k.prefix, n) }

// key is the n-th key of g, with prefix.
func (g keyGen) key(prefix string, n uint64) string {
	var b strings.Builder
	b.Grow(len(prefix) + 1 + KeyRandomLen)
	b.WriteString(prefix)
	b.WriteByte('_')
	// A seed's keys hash (seed, n, block), as they always did; a salt's
	// hash (salt, n, block), which no seed's input matches in length.
	in := make([]byte, 0, 32+8+8)
	if g.salt != nil {
		in = append(in, g.salt[:]...)
	} else {
		in = binary.BigEndian.AppendUint64(in, uint64(g.seed))
	}
	in = binary.BigEndian.AppendUint64(in, n)
	at := len(in)
	in = append(in, make([]byte, 8)...)
	for block, got := uint64(0), 0; got < KeyRandomLen; block++ {
		binary.BigEndian.PutUint64(in[at:], block)
		sum := sha256.Sum256(in)
		for _, c := range sum {
			// Rejection keeps the 62 letters equally likely.
			if c >= 248 || got == KeyRandomLen {
				continue
			}
			b.WriteByte(keyAlphabet[int(c)%len(keyAlphabet)])
			got++
		}
	}
	return b.String()
}

// Issue gives account a new key and revokes its previous one at once.
// The key is one the keyring never held: a key belongs to one account,
// and a revoked key stays revoked. (A keyring's counter is at most
// MaxKeys, so that the loop ends: an import is checked, checkImport.)
func (k *keyring) Issue(account string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var key string
	for {
		key = k.generate(k.counter)
		k.counter++
		if _, held := k.byHash[hashKey(key)]; !held {
			break
		}
	}
	if old, ok := k.current[account]; ok {
		k.byHash[old] = keyEntry{Account: account, Revoked: true}
	}
	h := hashKey(key)
	k.byHash[h] = keyEntry{Account: account}
	k.current[account] = h
	k.hints[account] = hint(key)
	k.keepFragments(key)
	return key
}

// Hint is the redacted form of account's current key, "" if it has none.
// The keyring keeps no key whole, so the hint is made when the key is
// issued and kept beside it.
func (k *keyring) Hint(account string) string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.hints[account]
}

// AuthError is why a request was not authenticated; every one is a 401.
type AuthError struct {
	Code    string // the ErrorBody's error
	Message string
}

var (
	errAuthMissing   = &AuthError{CodeMissingKey, "the Authorization header is missing; send Authorization: Bearer <API key>"}
	errAuthScheme    = &AuthError{CodeMalformedKey, "the Authorization header must use the Bearer scheme: Authorization: Bearer <API key>"}
	errAuthMalformed = &AuthError{CodeMalformedKey, "the API key is malformed: expected <prefix>_<random>"}
	errAuthUnknown   = &AuthError{CodeUnknownKey, "the API key is not valid"}
	errAuthRevoked   = &AuthError{CodeRevokedKey, "the API key was revoked; use the account's current key"}
)

// ParseBearer extracts the key from the Authorization header values as the
// server reads them (a key of the form prefix_<32 letters or digits>), or
// says why it cannot. It never returns the header value in an error.
func ParseBearer(values []string, prefix string) (string, *AuthError) {
	if len(values) == 0 {
		return "", errAuthMissing
	}
	if len(values) > 1 {
		return "", errAuthScheme
	}
	v := strings.TrimSpace(values[0])
	if v == "" {
		return "", errAuthMissing
	}
	scheme, key, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", errAuthScheme
	}
	key = strings.TrimLeft(key, " ")
	if !wellFormed(key, prefix) {
		return "", errAuthMalformed
	}
	return key, nil
}

// wellFormed reports whether key is <prefix>_<32 letters or digits>.
func wellFormed(key, prefix string) bool {
	if len(key) != len(prefix)+1+KeyRandomLen || !strings.HasPrefix(key, prefix) || key[len(prefix)] != '_' {
		return false
	}
	for i := len(prefix) + 1; i < len(key); i++ {
		if !isKeyChar(key[i]) {
			return false
		}
	}
	return true
}

// authenticate returns the hash of the request's key and its account.
// known is a key the journal hashed already, if any (a layer may
// have changed the header since, so it is used only for the same key).
func (k *keyring) authenticate(r *http.Request, known *hashedKey) (keyHash, string, *AuthError) {
	values := r.Header.Values("Authorization")
	var h keyHash
	if known != nil && len(values) == 1 && values[0] == known.header {
		h = known.hash
	} else {
		key, err := ParseBearer(values, k.prefix)
		if err != nil {
			return keyHash{}, "", err
		}
		h = hashKey(key)
	}
	k.mu.RLock()
	e, ok := k.byHash[h]
	k.mu.RUnlock()
	switch {
	case !ok:
		return keyHash{}, "", errAuthUnknown
	case e.Revoked:
		return keyHash{}, "", errAuthRevoked
	}
	return h, e.Account, nil
}

// AccountOf is the account whose key r's Authorization header carries,
// revoked or not ("" if none): a layer that acts on a client's account
// (regenerates its key during a walk) finds it here.
func (s *Server) AccountOf(r *http.Request) string {
	key, err := ParseBearer(r.Header.Values("Authorization"), s.cfg.KeyPrefix)
	if err != nil {
		return ""
	}
	return s.st.Load().keys.accountOf(hashKey(key))
}

// KeyCode is what the API says of r's key, without serving r and without
// counting it against a limit: "" for a key it accepts, otherwise the
// ErrorBody code of its 401 (a missing, malformed, unknown or revoked key).
// A layer that classes requests by their key asks it here.
func (s *Server) KeyCode(r *http.Request) string {
	if _, _, err := s.st.Load().keys.authenticate(r, nil); err != nil {
		return err.Code
	}
	return ""
}

// accountOf is the account of a key's hash, revoked or not ("" if none).
func (k *keyring) accountOf(h keyHash) string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.byHash[h].Account
}

// hint is the form of a key that may appear in logs and output:
// "tcm_…#3f9a", the one hint format of package schemas/redact.
func hint(key string) string { return redact.Form(key) }
