package simulator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// exportDoc is an export, its members in the order the import wants.
type exportDoc struct {
	Format     string          `json:"format"`
	Now        int64           `json:"now"`
	KeyCounter json.Number     `json:"keyCounter"`
	KeySeed    *int64          `json:"keySeed,omitempty"`
	Seeded     Keys            `json:"seeded"`
	Keys       []exportedKey   `json:"keys"`
	Recording  *Recording      `json:"recording,omitempty"`
	World      json.RawMessage `json:"world"`
}

func exportOf(t *testing.T, s *Server) exportDoc {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Export(&buf); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	var d exportDoc
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d exportDoc) json(t *testing.T) string {
	t.Helper()
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// recordingOf is what tcmkit record writes of s's world: no key, a
// recording member.
func recordingOf(t *testing.T, s *Server) exportDoc {
	d := exportOf(t, s)
	d.KeyCounter, d.KeySeed, d.Seeded, d.Keys = "0", nil, Keys{}, []exportedKey{}
	d.Recording = &Recording{Origin: "http://127.0.0.1:9", RecordedAt: d.Now, Complete: true, Shape: RecordingShape}
	return d
}

// keyStatus is what s's feed answers key: its status and error code.
func keyStatus(t *testing.T, s *Server, key string) string {
	t.Helper()
	r := s.serve(t, feedReq(key, "limit=1"))
	if r.status == http.StatusOK {
		return "200"
	}
	return fmt.Sprintf("%d %s", r.status, r.ErrorBody(t).Error)
}

// TestImportIssuesNoKeyTwice: an import is checked so that the keys it
// holds are never issued again (a key belongs to one account, forever; a
// revoked key stays revoked), and it holds to the bounds of a world built
// in memory. Issue 35: keyCounter 0 or 2^64-1 was accepted, and a key
// regenerated for acc_2 was acc_1's Pro key; 300,004 keys were accepted.
func TestImportIssuesNoKeyTwice(t *testing.T) {
	src := newServer(t, Config{Seed: 1})
	k := src.Seeded()
	created := decode[Account](t, src.serve(t, ctl("POST", "accounts", `{"plan":"free"}`)), 201)
	regen, err := src.RegenerateKey("acc_2")
	if err != nil {
		t.Fatal(err)
	}
	good := exportOf(t, src)

	other := func(hash string) string { // another hash, of a key nobody holds
		h := sha256.Sum256([]byte(hash))
		return hex.EncodeToString(h[:])
	}
	for _, tc := range []struct {
		name string
		edit func(d *exportDoc)
		cfg  Config
		want string
	}{
		{"keyCounter 0", func(d *exportDoc) { d.KeyCounter = "0" }, Config{}, "not among the first 0 keys of seed 1"},
		{"keyCounter 2^64-1", func(d *exportDoc) { d.KeyCounter = "18446744073709551615" }, Config{}, "issues at most 10000 keys"},
		{"keyCounter below the keys held", func(d *exportDoc) { d.KeyCounter = "3" }, Config{}, "not among the first 3 keys"},
		{"more keys than MaxKeys", func(d *exportDoc) {
			for i := 0; len(d.Keys) <= MaxKeys; i++ {
				d.Keys = append(d.Keys, exportedKey{Hash: other(fmt.Sprint(i)), Account: "acc_1", Revoked: true})
			}
		}, Config{}, "holds at most 10000"},
		{"a key twice, for two accounts", func(d *exportDoc) {
			dup := d.Keys[0]
			dup.Account = map[bool]string{true: "acc_2", false: "acc_1"}[dup.Account == "acc_1"]
			dup.Revoked = true
			d.Keys = append(d.Keys, dup)
		}, Config{}, "twice"},
		{"a key of no account", func(d *exportDoc) {
			d.KeySeed = nil // keys from elsewhere
			d.Keys = append(d.Keys, exportedKey{Hash: other("x"), Account: "acc_99", Revoked: true})
		}, Config{}, "which the world does not hold"},
		{"keys of another seed than they say", func(d *exportDoc) { s := int64(2); d.KeySeed = &s }, Config{}, "seed 2"},
		{"a seeded key it does not hold", func(d *exportDoc) { d.Seeded.Pro = "tcm_" + strings.Repeat("Q", KeyRandomLen) }, Config{}, "seeded.pro"},
		{"more accounts than --max-accounts", func(d *exportDoc) {}, Config{MaxAccounts: 3}, "--max-accounts"},
		{"a recording's origin of 3,000 characters", func(d *exportDoc) {
			d.Recording = &Recording{Origin: "http://" + strings.Repeat("a", 3000), Shape: RecordingShape}
		}, Config{}, "recording.origin"},
		{"a recording's origin with a newline", func(d *exportDoc) {
			d.Recording = &Recording{Origin: "http://a\n  pro key:     forged", Shape: RecordingShape}
		}, Config{}, "recording.origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := good
			d.Keys = append([]exportedKey(nil), good.Keys...)
			tc.edit(&d)
			cfg := tc.cfg
			cfg.Seed = 1
			checkImportRefused(t, cfg, d, tc.want)
		})
	}

	// What is accepted issues no key twice: into a simulator of the same
	// seed, of another (the export says its keys' seed), and an export
	// that does not say it (written before exports did).
	legacy := good
	legacy.KeySeed = nil
	for name, tc := range map[string]struct {
		seed int64
		doc  exportDoc
	}{"same seed": {1, good}, "another seed": {2, good}, "no keySeed": {1, legacy}} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, Config{Seed: tc.seed})
			decode[Imported](t, s.serve(t, ctl("PUT", "world", tc.doc.json(t))), 200)
			valid := map[string]string{"acc_1": k.Pro, "acc_2": regen, "acc_4": created.Key}
			revoked := []string{k.Free, k.Revoked}
			held := map[string]bool{k.Pro: true, k.Free: true, k.Revoked: true, regen: true, created.Key: true}
			checkNoKeyReissued(t, s, valid, revoked, held)
		})
	}
}

// checkImportRefused checks that a simulator of cfg refuses the export d
// with a 400 that says want, and that the refusal changed nothing.
func checkImportRefused(t *testing.T, cfg Config, d exportDoc, want string) {
	s := newServer(t, cfg)
	before := s.Seeded()
	r := s.serve(t, ctl("PUT", "world", d.json(t)))
	if r.status != http.StatusBadRequest || !strings.Contains(r.ErrorBody(t).Message, want) {
		t.Fatalf("import: %d %s, want 400 saying %q", r.status, r.body, want)
	}
	if s.Seeded() != before || keyStatus(t, s, before.Pro) != "200" {
		t.Error("a refused import changed the simulator")
	}
}

// checkNoKeyReissued regenerates each account's key, three rounds over,
// and checks that no new key is one issued before (held), that the valid
// keys (by account) answer and that the revoked ones stay revoked.
func checkNoKeyReissued(t *testing.T, s *Server, valid map[string]string, revoked []string, held map[string]bool) {
	for round := range 3 {
		for _, acc := range []string{"acc_2", "acc_1", "acc_4", "acc_3"} {
			key, err := s.RegenerateKey(acc)
			if err != nil {
				t.Fatal(err)
			}
			if held[key] {
				t.Fatalf("round %d: %s was given a key issued before", round, acc)
			}
			held[key] = true
			if old, ok := valid[acc]; ok {
				revoked = append(revoked, old)
			}
			valid[acc] = key
			for a, v := range valid {
				if got := keyStatus(t, s, v); got != "200" {
					t.Fatalf("round %d, after %s's new key: %s's key answers %s", round, acc, a, got)
				}
			}
			for _, old := range revoked {
				if got := keyStatus(t, s, old); got != "401 "+CodeRevokedKey {
					t.Fatalf("round %d, after %s's new key: a revoked key answers %s", round, acc, got)
				}
			}
		}
	}
}

// TestServedRecordingHasFreshKeys: the accounts of a recording get keys
// that no other world hands out: none of the recorded simulator's keys,
// nor of the seeded world of the replay's seed, is valid in the replay,
// in any role; the printed Pro key is Pro. Issue 34: the replay gave its
// Pro account the source's free key, and the source's Pro key was its
// revoked key.
func TestServedRecordingHasFreshKeys(t *testing.T) {
	src := newServer(t, Config{Seed: 1})
	third, err := src.RegenerateKey("acc_3")
	if err != nil {
		t.Fatal(err)
	}
	sk := src.Seeded()
	rec := recordingOf(t, src).json(t)
	foreign := []string{sk.Pro, sk.Free, sk.Revoked, third}
	for _, seed := range []int64{1, 2} {
		seeded := newServer(t, Config{Seed: seed}).Seeded()
		foreign = append(foreign, seeded.Pro, seeded.Free, seeded.Revoked)
	}

	// roles says the replay's seeded keys are what they are printed as,
	// and that no foreign key is valid there.
	roles := func(t *testing.T, s *Server) Keys {
		t.Helper()
		info := s.Info("http://x")
		want := []string{RolePro, RoleFree, RoleRevoked}
		if len(info.Keys) != 3 {
			t.Fatalf("info keys: %+v", info.Keys)
		}
		for i, kr := range info.Keys {
			if kr.Role != want[i] || kr.Hint != hint(kr.Key) || kr.Account == "" {
				t.Errorf("info key %d: %+v, want role %s", i, kr, want[i])
			}
		}
		k := s.Seeded()
		videos := func(key string) int { return s.serve(t, videosReq(key, `{"videoIds":["x"]}`)).status }
		if videos(k.Pro) != 200 || videos(k.Free) != 403 || keyStatus(t, s, k.Revoked) != "401 "+CodeRevokedKey {
			t.Errorf("the printed keys are not what they are printed as: pro %d, free %d, revoked %s", videos(k.Pro), videos(k.Free), keyStatus(t, s, k.Revoked))
		}
		for i, key := range foreign {
			if got := keyStatus(t, s, key); got != "401 "+CodeUnknownKey {
				t.Errorf("foreign key %d answers %s in the replay, want 401 %s", i, got, CodeUnknownKey)
			}
		}
		return k
	}

	for _, seed := range []int64{1, 2} {
		t.Run(fmt.Sprintf("served with seed %d", seed), func(t *testing.T) {
			rep := newServer(t, Config{Seed: seed, World: []byte(rec)})
			k := roles(t, rep)
			if err := rep.Reset(); err != nil {
				t.Fatal(err)
			}
			if rep.Seeded() != k {
				t.Error("a reset changed the replay's keys")
			}
			// An export of the replay, imported back, keeps its keys.
			back := newServer(t, Config{Seed: seed})
			decode[Imported](t, back.serve(t, ctl("PUT", "world", exportOf(t, rep).json(t))), 200)
			if back.Seeded() != k {
				t.Error("an export of the replay, imported, changed its keys")
			}
			roles(t, back)
			key, err := back.RegenerateKey("acc_1")
			if err != nil || keyStatus(t, back, key) != "200" || keyStatus(t, back, k.Pro) != "401 "+CodeRevokedKey {
				t.Errorf("a key regenerated after the import: %v", err)
			}
		})
	}

	t.Run("PUT into a running simulator", func(t *testing.T) {
		s := newServer(t, Config{Seed: 1})
		imp := decode[Imported](t, s.serve(t, ctl("PUT", "world", rec)), 200)
		k := roles(t, s)
		if len(imp.Keys) != 3 || imp.Whole != "/_control/info" {
			t.Fatalf("the answer: %+v", imp)
		}
		for i, want := range []KeyRole{{Role: RolePro, Account: "acc_1", Hint: hint(k.Pro)}, {Role: RoleFree, Account: "acc_2", Hint: hint(k.Free)}, {Role: RolePro, Account: "acc_3"}} {
			if got := imp.Keys[i]; got.Role != want.Role || got.Account != want.Account || (want.Hint != "" && got.Hint != want.Hint) || got.Key != "" {
				t.Errorf("answer key %d: %+v, want %+v", i, got, want)
			}
		}
		again := decode[Imported](t, s.serve(t, ctl("PUT", "world", rec)), 200)
		if again.Keys[0].Hint == imp.Keys[0].Hint {
			t.Error("the same recording imported twice gave the same keys: they are not fresh")
		}
	})
}
