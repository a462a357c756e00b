package simulator

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator/world"
)

// The journal is bounded in bytes: a long path or query is cut after
// redaction, saying so, and many long requests push the oldest out.
func TestJournalBoundedInBytes(t *testing.T) {
	s := newServer(t, Config{Seed: 1, JournalSize: 10_000})
	long := strings.Repeat("a", 60<<10)
	key := s.Seeded().Pro
	s.serve(t, feedReq("", "x="+long[:5000]+"&k="+key))
	// Padding of no letter or digit: the redactor has nothing to decode
	// in it (3000 paths of letters cost seconds of CPU), and the journal
	// stores and cuts it all the same.
	pad := strings.Repeat("~", 3000)
	for range 3000 {
		s.serve(t, req{method: "GET", target: "/api/" + pad + "?" + pad})
	}
	r := s.serve(t, ctl("GET", "requests", ""))
	page := decode[journalPage](t, r, 200)
	if len(r.body) > journalBudget+journalBudget/4 || len(page.Requests) >= 3001 || page.Dropped == 0 {
		t.Errorf("the journal answers %d bytes, %d entries, %d dropped", len(r.body), len(page.Requests), page.Dropped)
	}
	e := page.Requests[len(page.Requests)-1]
	if len(e.Path) > maxJournalText+32 || len(e.Query) > maxJournalText+32 || !strings.Contains(e.Query, "bytes cut]") {
		t.Errorf("an entry of %d + %d bytes: %.80s…", len(e.Path), len(e.Query), e.Query)
	}
	// Cut after redaction: a key past the cut is not half kept.
	s2 := newServer(t, Config{Seed: 1})
	s2.serve(t, feedReq("", "x="+long[:maxJournalText-5]+"&k="+key))
	raw := s2.serve(t, ctl("GET", "requests", "")).body
	if bytes.Contains(raw, []byte(key[4:12])) || !bytes.Contains(raw, []byte("bytes cut]")) {
		t.Errorf("the journal: %s", raw[len(raw)-300:])
	}
}

// Error answers are bounded: a violation list is capped and counts the
// rest, and what they echo is cut.
func TestErrorAnswersBounded(t *testing.T) {
	s := newServer(t, Config{Seed: 1, FeedLimit: -1, VideosLimit: -1})
	pro := s.Seeded().Pro
	var export bytes.Buffer
	if err := s.Export(&export); err != nil {
		t.Fatal(err)
	}
	bigHash := strings.Replace(export.String(), `"keys":[`, `"keys":[{"hash":"`+strings.Repeat("ab", 1<<19)+`","account":"a"},`, 1)
	var nums strings.Builder
	nums.WriteString(`{"videoIds":[`)
	for nums.Len() < MaxBodyBytes-100 {
		nums.WriteString("1,")
	}
	nums.WriteString(`1]}`)
	for _, tc := range []struct {
		name   string
		q      req
		status int
		most   int
		says   string
	}{
		{"a feed query of 15,000 %=&", feedReq(pro, strings.Repeat("%=&", 15000)), 400, 8 << 10, `"problemsOmitted":`},
		{"a videos body of 32,000 numbers", videosReq(pro, nums.String()), 400, 8 << 10, `"violationsOmitted":`},
		{"a 60 KB plan name", ctl("POST", "accounts", `{"plan":"`+strings.Repeat("x", 60<<10)+`"}`), 400, 2 << 10, "plan"},
		{"an import with a 1 MB key hash", ctl("PUT", "world", bigHash), 400, 2 << 10, "key hash"},
		{"a 60 KB fault operation", ctl("POST", "faults", `{"operation":"`+strings.Repeat("x", 60<<10)+`","status":500,"count":1}`), 400, 2 << 10, "operation"},
	} {
		r := s.serve(t, tc.q)
		if r.status != tc.status || len(r.body) > tc.most || !strings.Contains(string(r.body), tc.says) {
			t.Errorf("%s: status %d, %d bytes: %.300s", tc.name, r.status, len(r.body), r.body)
		}
		check(t, r, schemas.ErrorBody)
	}
}

func TestCutText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…[3 bytes cut]"},
		{"aé", 2, "a…[2 bytes cut]"},
	} {
		if got := cutText(tc.in, tc.max); got != tc.want {
			t.Errorf("cutText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// Faults and key regenerations are capped, with a 409 that says how to go
// on.
func TestFaultsAndKeysCapped(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	for i := range MaxFaults {
		if _, err := s.AddFault(FaultSpec{Operation: "health", Status: 500, Count: 1}); err != nil {
			t.Fatalf("fault %d: %v", i, err)
		}
	}
	r := s.serve(t, ctl("POST", "faults", `{"operation":"feed","status":500,"count":1}`))
	if e := r.ErrorBody(t); r.status != 409 || e.Error != CodeLimitReached || !strings.Contains(e.Message, "DELETE /_control/faults") {
		t.Errorf("fault %d: %d %s", MaxFaults+1, r.status, r.body)
	}
	for i := s.st.Load().keys.keyCount(); i < MaxKeys; i++ {
		if _, err := s.RegenerateKey("acc_1"); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	r = s.serve(t, ctl("POST", "accounts/acc_1/key", ""))
	if e := r.ErrorBody(t); r.status != 409 || e.Error != CodeLimitReached || !strings.Contains(e.Message, "reset") {
		t.Errorf("key %d: %d %s", MaxKeys+1, r.status, r.body)
	}
	if r := s.serve(t, ctl("POST", "accounts", `{"plan":"pro"}`)); r.status != 409 {
		t.Errorf("an account beyond the keys: %d %s", r.status, r.body)
	}
	if r := s.serve(t, ctl("POST", "reset", "")); r.status != 200 {
		t.Fatal(r.status)
	}
	if r := s.serve(t, ctl("POST", "accounts/acc_1/key", "")); r.status != 200 {
		t.Errorf("after a reset: %d %s", r.status, r.body)
	}
}

// An import refuses data after the export and a time beyond the clock's
// range; an advance past the range is a 400 naming the limit.
func TestImportAndAdvanceWithinTheClocksRange(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	var buf bytes.Buffer
	if err := s.Export(&buf); err != nil {
		t.Fatal(err)
	}
	exp := buf.String()
	now := fmt.Sprintf(`"now":%d,`, s.clock.Now().UnixMilli())
	for name, doc := range map[string]string{
		"trailing bytes":       exp + "garbage",
		"a second export":      exp + exp,
		"now at the limit":     strings.Replace(exp, now, `"now":9223372036854775807,`, 1),
		"now before 1970":      strings.Replace(exp, now, `"now":-5,`, 1),
		"no closing brace":     strings.TrimSuffix(strings.TrimSpace(exp), "}"),
		"a member after world": strings.TrimSuffix(strings.TrimSpace(exp), "}") + `,"x":1}`,
	} {
		if doc == exp {
			t.Fatalf("%s: unchanged", name)
		}
		r := s.serve(t, ctl("PUT", "world", doc))
		if r.status != 400 || len(r.body) > 2<<10 {
			t.Errorf("%s: %d %.300s", name, r.status, r.body)
		}
	}
	if r := s.serve(t, ctl("PUT", "world", exp+"\n")); r.status != 200 {
		t.Fatalf("the export itself: %d %s", r.status, r.body)
	}
	// A minute before the latest time the clock keeps, an hour more is
	// refused.
	s = newServer(t, Config{Seed: 1, Start: time.UnixMilli(world.MaxTime - 60_000), History: time.Hour})
	r := s.serve(t, ctl("POST", "clock/advance", `{"duration":"1h"}`))
	if e := r.ErrorBody(t); r.status != 400 || !strings.Contains(e.Message, world.MaxTimeText) {
		t.Errorf("an advance past the end of time: %d %s", r.status, r.body)
	}
	if r := s.serve(t, ctl("POST", "clock/advance", `{"duration":"30s"}`)); r.status != 200 {
		t.Errorf("an advance within it: %d %s", r.status, r.body)
	}
	if s.Advance(time.Hour); s.clock.Now().UnixMilli() > world.MaxTime || s.clock.Now().UnixMilli() < 0 {
		t.Errorf("Advance took the clock to %d", s.clock.Now().UnixMilli())
	}
}
