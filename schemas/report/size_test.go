package report

import (
	"fmt"
	"strings"
	"testing"
)

// However many specs fail with however long messages and transcripts, the
// Markdown form fits a merge-request comment and says it was shortened;
// the HTML folds every transcript.
func TestMarkdownFitsAComment(t *testing.T) {
	r := Report{Outcome: Failed, Config: map[string]string{}}
	for i := range 150 {
		msg := fmt.Sprintf("GET /api/public-feed?limit=%d: status 500, want 200\n", i) + strings.Repeat("  /events/1: a finding line of some length\n", 60)
		r.Specs = append(r.Specs, Spec{Name: fmt.Sprintf("spec number %d of a long suite", i), State: ResultFailed, Requests: 3,
			Failure: &Failure{Message: msg, Transcript: strings.Repeat("=== GET /api/public-feed\n< 200 OK\n", 500)}})
		r.Totals.add(r.Specs[i])
	}
	md, err := r.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	if len(md) > MaxMarkdown || !strings.Contains(string(md), "Shortened to fit a merge-request comment") {
		t.Errorf("Markdown of %d bytes:\n%s", len(md), md[:2000])
	}
	if !strings.Contains(string(md), "150 of the 150 specs that ran failed") {
		t.Errorf("the headline does not count what ran:\n%s", md[:500])
	}
	small := Report{Outcome: Failed, Specs: r.Specs[:2], Config: map[string]string{}}
	if md, _ := small.Markdown(); strings.Contains(string(md), "Shortened") {
		t.Errorf("a small report was shortened")
	}
	html, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if n, folded := strings.Count(string(html), `<pre class="transcript">`), strings.Count(string(html), `<details class="transcript"><summary>`); n != 150 || folded != n {
		t.Errorf("%d transcripts, %d of them folded", n, folded)
	}
}
