package simulator

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// The fuzz targets run their seeds (f.Add and testdata/fuzz/) as normal
// tests; go test -fuzz=FuzzFeedQuery ./simulator/ explores further.

func FuzzFeedQuery(f *testing.F) {
	for _, seed := range []string{"", "limit=50", "limit=1e99", "limit=-1", "limit=1.5", "limit=1&limit=2",
		"cursor=abc", "cursor=&limit=", "limit=%zz", "%zz=1", "limit=99999999999999999999", "&&&=&", "limit=007"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, problems := ParseFeedQuery(raw)
		if len(problems) == 0 && (q.Limit < 1 || q.Limit > schemas.MaxPageSize) {
			t.Fatalf("%q: limit %d accepted", raw, q.Limit)
		}
		for _, p := range problems {
			if p.Parameter == "" || p.Rule == "" || !utf8.ValidString(p.Value) || len(p.Value) > 64+len("…") {
				t.Fatalf("%q: problem %+v", raw, p)
			}
		}
	})
}

func FuzzVideosBody(f *testing.F) {
	for _, seed := range []string{`{"videoIds":["a"]}`, `{"videoIds":[]}`, `{}`, `[]`, `null`, `{"videoIds":[1]}`,
		`{"videoIds":["` + strings.Repeat("x", 33) + `"]}`, "{\"videoIds\":[\"\xff\"]}", `{"videoIds":["a"]} x`, `{`,
		` { "videoIds" : [ "a" , "é😀" ] } `, `{"videoIds":["a","b"],"videoIds":["c"]}`, `{"videoIds":["a\u0041"]}`, `{"videoIds":["a",]}`, `{"videoIds":["",""]}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ids, bad := ParseVideosRequest(jsonHeader, raw)
		if fast, ok := plainVideoIDs(raw); ok && utf8.Valid(raw) && len(raw) <= MaxBodyBytes {
			// The fast path accepts only what the schema accepts, with the same ids.
			doc, err := jsondoc.Decode(raw)
			if err != nil || schemas.Validate(schemas.VideosRequest, doc) != nil {
				t.Fatalf("the fast path accepted %q, the schema does not: %v", raw, err)
			}
			if bad != nil || !slices.Equal(fast, ids) {
				t.Fatalf("fast path %q, ParseVideosRequest %q %v", fast, ids, bad)
			}
			want := doc.(map[string]any)["videoIds"].([]any)
			for i, id := range fast {
				if want[i] != id {
					t.Fatalf("id %d: fast %q, schema path %q", i, id, want[i])
				}
			}
		}
		if bad != nil {
			if bad.Message == "" {
				t.Fatal("a refusal without a message")
			}
			return
		}
		if len(ids) < schemas.MinVideoIDs || len(ids) > schemas.MaxVideoIDs {
			t.Fatalf("%d ids accepted", len(ids))
		}
		for _, id := range ids {
			if n := utf8.RuneCountInString(id); n < schemas.MinVideoIDLen || n > schemas.MaxVideoIDLen {
				t.Fatalf("id of %d characters accepted", n)
			}
		}
	})
}

func FuzzAuthHeader(f *testing.F) {
	s, err := New(Config{Seed: 1, Channels: 1, History: 3600e9, FeedLimit: -1})
	if err != nil {
		f.Fatal(err)
	}
	k := s.Seeded()
	for _, seed := range []string{"", "Bearer", "Bearer ", "Basic x", "Bearer " + k.Pro, "bearer " + k.Revoked,
		"Bearer tcm_", "Bearer " + strings.Repeat("a", 40), "Bearer\t" + k.Pro, "Bearer  " + k.Free} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodGet, schemas.PathFeed+"?limit=1", nil)
		r.Header.Set("Authorization", header)
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		key, perr := ParseBearer([]string{header}, DefaultKeyPrefix)
		switch {
		case w.Code == http.StatusOK:
			if perr != nil || (key != k.Pro && key != k.Free) {
				t.Fatalf("%q: 200 without a valid key", header)
			}
		case w.Code == http.StatusUnauthorized:
			if perr == nil && (key == k.Pro || key == k.Free) {
				t.Fatalf("%q: 401 with a valid key", header)
			}
		default:
			t.Fatalf("%q: status %d", header, w.Code)
		}
		if err := schemas.ValidateJSON(map[bool]schemas.Resource{true: schemas.FeedPage, false: schemas.ErrorBody}[w.Code == 200], w.Body.Bytes()); err != nil {
			t.Fatal(err)
		}
	})
}
