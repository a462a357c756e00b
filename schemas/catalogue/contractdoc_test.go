package catalogue

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
)

// CONTRACT.md is generated from requirements.json, schemas/contract.go and
// ledger.json; a requirement, a number or a statement changed without go
// generate fails here.
func TestContractDocCurrent(t *testing.T) {
	// From the repository's root, as DocPath and DocURL say it: a moved file
	// would leave every report's link dangling.
	committed, err := os.ReadFile(filepath.Join("..", "..", DocPath))
	if err != nil {
		t.Fatalf("%s: %v; write it with: go generate ./schemas/catalogue", DocPath, err)
	}
	want, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, want) {
		cl, wl := strings.Split(string(committed), "\n"), strings.Split(string(want), "\n")
		i := 0
		for i < len(cl) && i < len(wl) && cl[i] == wl[i] {
			i++
		}
		line := func(ls []string) string {
			if i < len(ls) {
				return ls[i]
			}
			return "(end of file)"
		}
		t.Fatalf("%s is not what the generator writes now (first difference at line %d):\n  file:      %s\n  generated: %s\nRegenerate it: go generate ./schemas/catalogue",
			DocPath, i+1, line(cl), line(wl))
	}
}

// The document says every requirement under a heading of its id (the
// anchor DocLink points at), with its text and, for an open point, the
// simulator's choice; and it says the contract's numbers.
func TestContractDocContent(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	doc := string(c.ContractDoc())
	anchors := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(doc, -1) {
		anchors[headingAnchor(m[1])]++
	}
	// A repeated heading gets a numbered anchor: the ones linked to must be unique.
	for _, f := range c.features() {
		if a := headingAnchor(featureHeading(f)); anchors[a] != 1 {
			t.Errorf("feature %s: %d headings with the anchor #%s", f, anchors[a], a)
		}
	}
	for _, r := range c.List() {
		link := DocLink(r.ID)
		if n := anchors[link[strings.IndexByte(link, '#')+1:]]; n != 1 {
			t.Errorf("%s: %d headings with the anchor of %s", r.ID, n, link)
		}
		section := doc[strings.Index(doc, "\n#### "+string(r.ID)+"\n"):]
		if next := strings.Index(section[1:], "\n#### "); next > 0 {
			section = section[:next+1]
		}
		if !strings.Contains(section, mdText(r.Text)) {
			t.Errorf("%s: its text is not under its heading", r.ID)
		}
		if r.Kind == Open && !strings.Contains(section, "**The simulator's choice:** "+mdText(r.SimulatorChoice)) {
			t.Errorf("%s: the simulator's choice is not under its heading", r.ID)
		}
	}
	for _, want := range []string{
		"| 50 | `DefaultPageSize`", "| 200 | `MaxPageSize`", "| 1 to 20 |", "| 1 to 32 |",
		"| 20 per minute |", "every 15 minutes", schemas.PathFeed, "The 11 event types",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document does not say %q", want)
		}
	}
	// AUTH-VALID says <API_KEY>: raw, it would render as an unknown HTML tag and vanish.
	if strings.Contains(doc, "<API_KEY>") || !strings.Contains(doc, "&lt;API_KEY&gt;") {
		t.Errorf("angle brackets of the texts are not escaped")
	}
}

func TestMarkdownHelpers(t *testing.T) {
	for in, want := range map[string]string{
		"snake_case codes":       "snake_case codes",
		"<KEY_PREFIX>_<random>":  `&lt;KEY_PREFIX&gt;\_&lt;random&gt;`,
		"_lead and trail_":       `\_lead and trail\_`,
		"a * b [c] \\":           `a \* b \[c\] \\`,
		"Tom & Jerry":            "Tom &amp; Jerry",
		"VideoEntry (`videos`)!": "VideoEntry (`videos`)!",
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"Health (`health`)":               "health-health",
		"One account, its own data (`x`)": "one-account-its-own-data-x",
		"FEED-ORDER":                      "feed-order",
		"The rate limit (`rate-limit`)":   "the-rate-limit-rate-limit",
	} {
		if got := headingAnchor(in); got != want {
			t.Errorf("headingAnchor(%q) = %q, want %q", in, got, want)
		}
	}
}
