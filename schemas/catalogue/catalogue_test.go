package catalogue

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
)

func TestLoadEmbedded(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Version != 1 || c.Len() == 0 {
		t.Fatalf("version %d, %d requirements", c.Version, c.Len())
	}
	features := []string{"health", "auth", "pro", "pagination", "events", "videos", "rate-limit", "errors", "isolation", "strict"}
	for _, r := range c.List() {
		if r.Feature == "client" {
			if r.Kind == Must {
				t.Errorf("%s: a client requirement is of kind client (or open), not must", r.ID)
			}
		} else if r.Kind == Client {
			t.Errorf("%s: kind client, but feature %q", r.ID, r.Feature)
		} else if !slices.Contains(features, r.Feature) {
			t.Errorf("%s: feature %q is not one of the suite's labels %v", r.ID, r.Feature, features)
		}
		got, ok := c.Lookup(r.ID)
		if !ok || got != r {
			t.Errorf("Lookup(%s) = %+v, %v", r.ID, got, ok)
		}
	}
	if len(c.OfKind(Must))+len(c.OfKind(Open))+len(c.OfKind(Client)) != c.Len() {
		t.Errorf("kinds do not partition the catalogue")
	}
	if _, ok := c.Lookup("NO-SUCH-ID"); ok {
		t.Errorf("Lookup of an unknown id succeeded")
	}
}

// The ids the brief promised to the suite engineers must stay stable.
func TestStableIDs(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []ID{
		"HEALTH-OK", "AUTH-MISSING", "AUTH-MALFORMED", "AUTH-REVOKED", "AUTH-VALID", "PRO-GATE",
		"FEED-ORDER", "FEED-PAGE-DEFAULT", "FEED-LIMIT", "FEED-LIMIT-CAP", "FEED-CURSOR-WALK",
		"FEED-CURSOR-END", "FEED-BAD-PARAM", "EVENT-SCHEMA", "EVENT-TYPES", "EVENT-CHANNEL-NO-VIDEO",
		"TIMESTAMP-EPOCH-MS", "COUNT-NONNEG-OR-NULL", "URI-FORMAT", "EVENT-ID-UNIQUE",
		"VIDEOS-IDS-MIN", "VIDEOS-IDS-MAX", "VIDEOS-ID-LEN", "VIDEOS-BAD-BODY", "VIDEOS-MISSING",
		"VIDEOS-ENTRY-SCHEMA", "VIDEOS-PARTITION", "RATE-LIMIT-429", "RATE-RETRY-AFTER",
		"RATE-ALLOWS-20", "RATE-PER-KEY", "ERROR-BODY", "CONTENT-TYPE-JSON",
	} {
		r, ok := c.Lookup(id)
		if !ok {
			t.Errorf("%s missing", id)
			continue
		}
		if r.Kind != Must {
			t.Errorf("%s: kind %q, want must", id, r.Kind)
		}
	}
}

// The catalogue's texts repeat the contract's numbers for the reader; they
// must say what schemas/contract.go says.
func TestTextsAgreeWithContract(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	itoa := strconv.Itoa
	tests := []struct {
		id   string
		want []string
	}{
		{"FEED-PAGE-DEFAULT", []string{itoa(schemas.DefaultPageSize)}},
		{"FEED-LIMIT-CAP", []string{itoa(schemas.MaxPageSize)}},
		{"VIDEOS-IDS-MIN", []string{itoa(schemas.MinVideoIDs) + " to " + itoa(schemas.MaxVideoIDs)}},
		{"VIDEOS-IDS-MAX", []string{itoa(schemas.MaxVideoIDs) + " ids", itoa(schemas.MaxVideoIDs + 1)}},
		{"VIDEOS-ID-LEN", []string{itoa(schemas.MinVideoIDLen) + " to " + itoa(schemas.MaxVideoIDLen), itoa(schemas.MaxVideoIDLen + 1)}},
		{"RATE-ALLOWS-20", []string{itoa(schemas.FeedRequestsPerMinute) + " requests per minute"}},
		{"RATE-LIMIT-429", []string{itoa(schemas.FeedRequestsPerMinute) + " requests per minute"}},
		{"EVENT-TYPES", append([]string{itoa(len(schemas.EventTypes))}, schemas.EventTypes...)},
	}
	for _, tt := range tests {
		r, ok := c.Lookup(ID(tt.id))
		if !ok {
			t.Errorf("%s missing", tt.id)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(r.Text, w) {
				t.Errorf("%s: text %q does not say %q", tt.id, r.Text, w)
			}
		}
	}
	r, _ := c.Lookup("EVENT-CHANNEL-NO-VIDEO")
	for _, typ := range schemas.EventTypes {
		if schemas.IsChannelLevel(typ) != strings.Contains(r.Text, typ) {
			t.Errorf("EVENT-CHANNEL-NO-VIDEO: text and schemas.IsChannelLevel disagree on %s", typ)
		}
	}
}

func TestParseRejects(t *testing.T) {
	const ok = `{"id":"A-B","kind":"must","feature":"auth","section":"S","text":"T"}`
	tests := []struct {
		name, json, want string
	}{
		{"not json", `{`, "decode"},
		{"unknown field", `{"version":1,"requirements":[` + ok + `],"extra":1}`, "unknown field"},
		{"bad version", `{"version":2,"requirements":[` + ok + `]}`, "version 2"},
		{"empty", `{"version":1,"requirements":[]}`, "no requirements"},
		{"duplicate", `{"version":1,"requirements":[` + ok + `,` + ok + `]}`, "duplicate id"},
		{"lower-case id", `{"version":1,"requirements":[{"id":"a-b","kind":"must","feature":"auth","section":"S","text":"T"}]}`, "upper-case"},
		{"trailing hyphen", `{"version":1,"requirements":[{"id":"A-","kind":"must","feature":"auth","section":"S","text":"T"}]}`, "upper-case"},
		{"empty text", `{"version":1,"requirements":[{"id":"A","kind":"must","feature":"auth","section":"S","text":" "}]}`, "empty text"},
		{"empty section", `{"version":1,"requirements":[{"id":"A","kind":"must","feature":"auth","section":"","text":"T"}]}`, "empty section"},
		{"no feature", `{"version":1,"requirements":[{"id":"A","kind":"must","section":"S","text":"T"}]}`, "feature"},
		{"upper feature", `{"version":1,"requirements":[{"id":"A","kind":"must","feature":"AUTH","section":"S","text":"T"}]}`, "feature"},
		{"bad kind", `{"version":1,"requirements":[{"id":"A","kind":"should","feature":"auth","section":"S","text":"T"}]}`, `kind "should"`},
		{"open without choice", `{"version":1,"requirements":[{"id":"A","kind":"open","feature":"auth","section":"S","text":"T"}]}`, "without simulatorChoice"},
		{"must with choice", `{"version":1,"requirements":[{"id":"A","kind":"must","feature":"auth","section":"S","text":"T","simulatorChoice":"x"}]}`, "only for open"},
		{"unknown shape", `{"version":1,"requirements":[{"id":"A","kind":"must","feature":"auth","section":"S","text":"T","shapes":["first-page","frist-page"]}]}`, `shapes[1] "frist-page" is no shape of the grid`},
		{"shape twice", `{"version":1,"requirements":[{"id":"A","kind":"must","feature":"auth","section":"S","text":"T","shapes":["videos","first-page","videos"]}]}`, `shapes[2] "videos" twice`},
		{"open with shapes", `{"version":1,"requirements":[{"id":"A","kind":"open","feature":"auth","section":"S","text":"T","simulatorChoice":"x","shapes":[]}]}`, "shapes are only for must"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := Parse([]byte(`{"version":1,"requirements":[` + ok + `]}`)); err != nil {
		t.Fatalf("valid catalogue rejected: %v", err)
	}
}

func TestIsIDAndIDs(t *testing.T) {
	for label, want := range map[string]bool{
		"FEED-ORDER": true, "RATE-ALLOWS-20": true, "A": true,
		"pagination": false, "rate-limit": false, "Feed-Order": false, "FEED--ORDER": false, "": false, "-A": false,
	} {
		if got := IsID(label); got != want {
			t.Errorf("IsID(%q) = %v, want %v", label, got, want)
		}
	}
	got := IDs([]string{"pagination", "FEED-ORDER", "FEED-LIMIT", "FEED-ORDER", "strict"})
	if want := []string{"FEED-ORDER", "FEED-LIMIT"}; !slices.Equal(got, want) {
		t.Errorf("IDs = %v, want %v", got, want)
	}
}

func TestCheck(t *testing.T) {
	c, err := Parse([]byte(`{"version":1,"requirements":[
		{"id":"A","kind":"must","feature":"auth","section":"S","text":"T"},
		{"id":"B","kind":"must","feature":"auth","section":"S","text":"T"},
		{"id":"O","kind":"open","feature":"auth","section":"S","text":"T","simulatorChoice":"c"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cov := c.Check(map[string][]string{
		"spec 2": {"auth", "A", "ZZZ"},
		"spec 1": {"auth", "A"},
	})
	if !slices.Equal(cov.Uncovered, []string{"B"}) {
		t.Errorf("Uncovered = %v, want [B] (open O needs no spec)", cov.Uncovered)
	}
	if !slices.Equal(cov.Specs["A"], []string{"spec 1", "spec 2"}) {
		t.Errorf("Specs[A] = %v", cov.Specs["A"])
	}
	if !slices.Equal(cov.Unknown["ZZZ"], []string{"spec 2"}) {
		t.Errorf("Unknown = %v", cov.Unknown)
	}
	msg := cov.Err().Error()
	for _, w := range []string{"without a spec: B", "unknown requirement ZZZ named by: spec 2"} {
		if !strings.Contains(msg, w) {
			t.Errorf("Err() = %q, want it to say %q", msg, w)
		}
	}
	full := c.Check(map[string][]string{"s": {"A", "B"}})
	if err := full.Err(); err != nil {
		t.Errorf("full coverage: %v", err)
	}
}

// ids.go is generated from requirements.json; a requirement added, removed
// or renamed in the file without `go generate` fails here.
func TestIDsMatchFile(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	var inFile []ID
	for _, r := range c.List() {
		inFile = append(inFile, r.ID)
	}
	if !slices.Equal(inFile, All()) {
		t.Errorf("ids.go is stale: run go generate ./schemas/catalogue\n file: %v\n ids.go: %v", inFile, All())
	}
}
