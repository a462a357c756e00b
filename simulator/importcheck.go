package simulator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/simulator/world"
)

// What an import must hold to, in one place. A world built in memory
// holds to these by construction; an import (PUT /_control/world, --world)
// is a document anyone may have edited, and is checked against each of
// them before it replaces anything:
//
//   - the world's own bounds and consistency (channels, videos, events
//     against the schema, times within 1970..9999, the schedule within a
//     poll interval of its clock): package world checks them as it reads;
//   - the clock: at most one clock advance (MaxAdvance) after the world's
//     (importClock), and nothing after the document (importLimits);
//   - accounts: at most Config.MaxAccounts, as POST /_control/accounts
//     makes them;
//   - keys: at most MaxKeys held, revoked ones included, and at most
//     MaxKeys ever issued (keyCounter); each hash once; each key an
//     account's of the world; one valid key per account; the seeded keys
//     among them. Keys that say the seed they come from (keySeed) must be
//     that seed's first keyCounter keys, so that the keys issued next
//     are new; keys that say none (a served recording's) keep their
//     hashes, and the keys issued next come from a fresh salt. Either
//     way the keyring never hands out a key it holds (keyring.Issue): a
//     key belongs to one account, forever, and a revoked key stays
//     revoked;
//   - a recording's description (what the banner and /_control/info
//     print): bounded, as the recorder writes it.

// exportedKey is one keyring entry in an export: the hash, never the key.
type exportedKey struct {
	Hash    string `json:"hash"`
	Account string `json:"account"`
	Revoked bool   `json:"revoked,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

// export is what an export says of the keyring: its counter, the seed
// its keys come from (nil for fresh keys: a served recording's) and every
// key by its hash.
func (k *keyring) export() (counter uint64, seed *int64, keys []exportedKey) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	for h, e := range k.byHash {
		ek := exportedKey{Hash: hex.EncodeToString(h[:]), Account: e.Account, Revoked: e.Revoked}
		if !e.Revoked {
			ek.Hint = k.hints[e.Account]
		}
		keys = append(keys, ek)
	}
	slices.SortFunc(keys, func(a, b exportedKey) int { return strings.Compare(a.Hash, b.Hash) })
	if k.gen.salt == nil {
		s := k.gen.seed
		seed = &s
	}
	return k.counter, seed, keys
}

// Bounds of a recording's description, as the recorder writes it: an
// origin is scheme://host[:port]; what it did not see is a short list.
const (
	maxOriginLen     = 2048
	maxUnknownItems  = 64
	maxUnknownLen    = 512
	maxRecordingText = 1024
)

// checkImport checks an import against every bound above that is not the
// world's own, and makes its keyring: the export's keys kept, or a
// recording's accounts given fresh ones (from salt: a reset of a world
// served from the start gives the same keys again). An export that does
// not say its keys' seed (written before exports said it) is read with
// the simulator's own seed, Config.Seed, when its keys are that seed's.
func (s *Server) checkImport(e *export, wd *world.World, salt *[32]byte) (*keyring, error) {
	accounts := wd.Accounts()
	if len(accounts) > s.cfg.MaxAccounts {
		return nil, fmt.Errorf("%d accounts, more than this simulator holds (%d, --max-accounts)", len(accounts), s.cfg.MaxAccounts)
	}
	if err := checkRecording(e.Recording); err != nil {
		return nil, err
	}
	keys, err := importKeys(s.cfg.KeyPrefix, s.cfg.Seed, e, salt)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(accounts))
	for _, a := range accounts {
		known[a.ID] = true
	}
	for _, ek := range e.Keys {
		if !known[ek.Account] {
			return nil, fmt.Errorf("a key of account %q, which the world does not hold", excerpt(ek.Account))
		}
	}
	if e.Recording != nil && len(e.Keys) == 0 {
		e.Seeded = recordingKeys(keys, wd) // a recording stores no key
	}
	for _, a := range accounts {
		if keys.Hint(a.ID) == "" {
			return nil, fmt.Errorf("account %q has no valid key", excerpt(a.ID))
		}
	}
	for _, sk := range []struct{ name, key string }{{"pro", e.Seeded.Pro}, {"free", e.Seeded.Free}, {"revoked", e.Seeded.Revoked}} {
		if sk.key == "" {
			continue
		}
		if !wellFormed(sk.key, s.cfg.KeyPrefix) || keys.accountOf(hashKey(sk.key)) == "" {
			return nil, fmt.Errorf("seeded.%s is not a key of this export's keys", sk.name)
		}
		keys.mu.Lock()
		keys.keepFragments(sk.key) // fresh keys cannot be made again: the seeded ones are known whole
		keys.mu.Unlock()
	}
	return keys, nil
}

// checkRecording bounds what a recording says of itself: the banner and
// GET /_control/info print it.
func checkRecording(r *Recording) error {
	if r == nil {
		return nil
	}
	switch {
	case len(r.Origin) > maxOriginLen || strings.ContainsFunc(r.Origin, isControl):
		return fmt.Errorf("recording.origin: want scheme://host[:port], at most %d characters without control characters", maxOriginLen)
	case len(r.Shape) > maxRecordingText || strings.ContainsFunc(r.Shape, isControl):
		return fmt.Errorf("recording.shape: at most %d characters without control characters", maxRecordingText)
	case len(r.Unknown) > maxUnknownItems:
		return fmt.Errorf("recording.unknown: %d items, at most %d", len(r.Unknown), maxUnknownItems)
	case r.Requests < 0 || r.Events < 0 || r.Videos < 0 || r.Reshaped < 0:
		return fmt.Errorf("recording: a negative count")
	}
	for i, u := range r.Unknown {
		if len(u) > maxUnknownLen || strings.ContainsFunc(u, isControl) {
			return fmt.Errorf("recording.unknown[%d]: at most %d characters without control characters", i, maxUnknownLen)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// importKeys makes the keyring of an export's keys (see checkImport);
// serverSeed is Config.Seed.
func importKeys(prefix string, serverSeed int64, e *export, salt *[32]byte) (*keyring, error) {
	if e.KeyCounter > MaxKeys {
		return nil, fmt.Errorf("keyCounter %d: a simulator issues at most %d keys (revoked ones included)", e.KeyCounter, MaxKeys)
	}
	if len(e.Keys) > MaxKeys {
		return nil, fmt.Errorf("%d keys: a simulator holds at most %d (revoked ones included)", len(e.Keys), MaxKeys)
	}
	hashes := make([]keyHash, len(e.Keys))
	seen := make(map[keyHash]bool, len(e.Keys))
	for i, ek := range e.Keys {
		raw, err := hex.DecodeString(ek.Hash)
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("key hash %q: not a hex SHA-256", excerpt(ek.Hash))
		}
		copy(hashes[i][:], raw)
		if seen[hashes[i]] {
			return nil, fmt.Errorf("key hash %s… twice: a key belongs to one account, once", ek.Hash[:8])
		}
		seen[hashes[i]] = true
	}
	gen, counter := keyGen{salt: salt}, uint64(0)
	if gen.salt == nil {
		gen.salt = freshSalt()
	}
	switch {
	case e.KeySeed != nil:
		if i, n := outside(prefix, keyGen{seed: *e.KeySeed}, e.KeyCounter, hashes); i >= 0 {
			return nil, fmt.Errorf("key %d (hash %s…) is not among the first %d keys of seed %d (keyCounter, keySeed)%s: the keys issued next would repeat it",
				i, e.Keys[i].Hash[:8], e.KeyCounter, *e.KeySeed, n)
		}
		gen, counter = keyGen{seed: *e.KeySeed}, e.KeyCounter
	case len(hashes) > 0:
		// An export written before exports said their keys' seed: the
		// keys are this simulator's seed's, if they all are.
		if i, _ := outside(prefix, keyGen{seed: serverSeed}, e.KeyCounter, hashes); i < 0 {
			gen, counter = keyGen{seed: serverSeed}, e.KeyCounter
		}
	}
	k := newKeyring(prefix, gen)
	k.counter = counter
	for i, ek := range e.Keys {
		h := hashes[i]
		k.byHash[h] = keyEntry{Account: ek.Account, Revoked: ek.Revoked}
		if ek.Revoked {
			continue
		}
		if _, dup := k.current[ek.Account]; dup {
			return nil, fmt.Errorf("account %q has more than one valid key", excerpt(ek.Account))
		}
		k.current[ek.Account] = h
		k.hints[ek.Account] = redact.HashForm(prefix+"_", h[:]) // the hint is the hash's, whatever the import says
	}
	if gen.salt == nil {
		// A seed's keys are known again, and so are their fragments.
		for n := counter - min(counter, maxFragmentKeys); n < counter; n++ {
			if key := k.generate(n); k.byHash[hashKey(key)].Account != "" {
				k.keepFragments(key)
			}
		}
	}
	return k, nil
}

// outside is the index of the first hash that is not among the first
// counter keys of gen (-1 if none), and, when it is a later one, which,
// in words. counter and len(hashes) are at most MaxKeys: this makes at
// most MaxKeys keys (about 10 ms).
func outside(prefix string, gen keyGen, counter uint64, hashes []keyHash) (int, string) {
	made := max(counter, uint64(len(hashes))) // a key past the counter is found among these, if it is one
	index := make(map[keyHash]uint64, made)
	for n := range made {
		index[hashKey(gen.key(prefix, n))] = n
	}
	for i, h := range hashes {
		n, ok := index[h]
		switch {
		case !ok:
			return i, ""
		case n >= counter:
			return i, fmt.Sprintf(" (it is key %d)", n)
		}
	}
	return -1, ""
}
