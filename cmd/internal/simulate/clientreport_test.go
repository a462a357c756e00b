package simulate

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/simulator/clients"
)

func TestListScenarios(t *testing.T) {
	var out strings.Builder
	if code := run(t.Context(), []string{"--list-scenarios"}, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, s := range clients.Scenarios() {
		if !strings.Contains(out.String(), s.Name) || !strings.Contains(out.String(), s.Expect) {
			t.Errorf("--list-scenarios does not show %s with what a good client does", s.Name)
		}
	}
}

// At exit, --client-report writes the verdicts: JSON, Markdown, HTML and
// JUnit, with the findings, the scenario and no key.
func TestClientReportAtExit(t *testing.T) {
	dir := t.TempDir()
	infoPath := filepath.Join(dir, "info.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	var stdout strings.Builder
	go func() {
		code <- run(ctx, []string{"--addr", "127.0.0.1:0", "--speed", "0", "--channels", "2", "--history", "24h", "--info-file", infoPath,
			"--scenario", "videos-5xx", "--client-report", filepath.Join(dir, "report")}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "clients:") {
			if !strings.Contains(sc.Text(), "scenario videos-5xx armed") || !strings.Contains(sc.Text(), "/_control/clients") {
				t.Errorf("banner: %s", sc.Text())
			}
			break
		}
	}
	done := make(chan struct{})
	go func() {
		for sc.Scan() {
			stdout.WriteString(sc.Text() + "\n")
		}
		close(done)
	}()
	raw, err := os.ReadFile(infoPath)
	if err != nil {
		t.Fatal(err)
	}
	var info map[string]string
	if err := unmarshalInfo(raw, &info); err != nil {
		t.Fatal(err)
	}
	send := func(method, path, body string, header ...string) {
		req, _ := http.NewRequest(method, info["url"]+path, strings.NewReader(body))
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	pro := info["proKey"]
	send("GET", "/api/public-feed?limit=2", "", "Authorization", "Bearer "+pro)
	send("GET", "/api/public-feed?key="+pro, "")                                                                                 // the key in a URL, and no header
	send("POST", "/api/public/videos", `{"videoIds":["a"]}`, "Authorization", "Bearer "+pro, "Content-Type", "application/json") // 500: the scenario
	send("POST", "/api/public/videos", `{"videoIds":["a"]}`, "Authorization", "Bearer "+pro, "Content-Type", "application/json") // at once: no backoff
	cancel()
	if c := <-code; c != clients.ExitFailed {
		t.Fatalf("exit %d, want %d: a client failed", c, clients.ExitFailed)
	}
	<-done
	if !strings.Contains(stdout.String(), "client report: ") || !strings.Contains(stdout.String(), "(failed: 1 client, 1 failed)") {
		t.Errorf("stdout: %s", stdout.String())
	}
	for _, name := range []string{report.ClientJSONFile, report.ClientMarkdownFile, report.ClientHTMLFile, report.ClientJUnitFile} {
		b, err := os.ReadFile(filepath.Join(dir, "report", name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), pro[4:12]) {
			t.Errorf("%s holds a key", name)
		}
	}
	var r report.Report
	b, _ := os.ReadFile(filepath.Join(dir, "report", report.ClientJSONFile))
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	results := map[string]report.Result{}
	for _, q := range r.Requirements {
		results[q.ID] = q.Result
	}
	if r.Kind != report.KindClient || r.Outcome != report.Failed || results["CLIENT-KEY-NOT-IN-URL"] != report.ResultFailed ||
		results["CLIENT-BEARER"] != report.ResultFailed || results["CLIENT-VIDEO-IDS"] != report.ResultPassed ||
		results["CLIENT-WALK-END"] != report.ResultSkipped || results["CLIENT-HEALTH-KEY"] != report.ResultNotApplicable {
		t.Errorf("report: %s, %v", r.Outcome, results)
	}
	var scenario *report.Spec
	for i, s := range r.Specs {
		if strings.Contains(s.Name, "scenario videos-5xx") {
			scenario = &r.Specs[i]
		}
	}
	if scenario == nil || scenario.State != report.ResultFailed || !strings.Contains(scenario.Failure.Message, "no pause") {
		t.Errorf("scenario spec: %+v", scenario)
	}
}
