package simulate

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/simulator/clients"
)

// running is the binary run in this process, until stop.
type running struct {
	t      *testing.T
	info   map[string]any
	out    *lockedBuffer
	cancel context.CancelFunc
	code   chan int
}

// runSim runs the binary with args on a free port and an info file, and
// waits for it to listen.
func runSim(t *testing.T, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, out: &lockedBuffer{}, cancel: cancel, code: make(chan int, 1)}
	infoPath := filepath.Join(t.TempDir(), "info.json")
	args = append([]string{"--addr", "127.0.0.1:0", "--speed", "0", "--channels", "2", "--history", "24h", "--info-file", infoPath}, args...)
	go func() { r.code <- run(ctx, args, r.out, io.Discard) }()
	t.Cleanup(cancel)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		raw, err := os.ReadFile(infoPath)
		if err == nil && json.Unmarshal(raw, &r.info) == nil {
			return r
		}
		select {
		case c := <-r.code:
			t.Fatalf("exit %d before listening", c)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the simulator did not start")
		}
	}
}

// get asks the running simulator for path (API or control), with a key.
func (r *running) get(path, key string) (int, []byte) {
	r.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.info["url"].(string)+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// stop is SIGINT: it returns the exit status.
func (r *running) stop() int {
	r.cancel()
	select {
	case c := <-r.code:
		return c
	case <-time.After(30 * time.Second):
		r.t.Fatal("the simulator did not stop")
		return -1
	}
}

// With --client-report the exit status is the verdict on the clients, and
// on a run no client came to the live verdict and the report agree: it
// errored (nothing was judged), never passed.
func TestClientReportExitStatus(t *testing.T) {
	t.Run("no client", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "report")
		r := runSim(t, "--client-report", out)
		_, body := r.get("/_control/clients?final=true", "")
		var v clients.Verdicts
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		if v.Passed || v.Outcome != clients.Errored || v.Errored != clients.NothingJudged {
			t.Errorf("live verdict on an empty run: passed %v, %s (%s)", v.Passed, v.Outcome, v.Errored)
		}
		if c := r.stop(); c != clients.ExitErrored {
			t.Errorf("exit %d, want %d (no client judged)", c, clients.ExitErrored)
		}
		rep := readReport(t, out)
		if rep.Outcome != report.Errored || string(rep.Outcome) != v.Outcome {
			t.Errorf("report %s, live %s", rep.Outcome, v.Outcome)
		}
	})
	t.Run("a polite client", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "report")
		r := runSim(t, "--client-report", out)
		if st, _ := r.get("/api/public-feed?limit=1", r.info["proKey"].(string)); st != http.StatusOK {
			t.Fatalf("feed: %d", st)
		}
		if c := r.stop(); c != clients.ExitPassed {
			t.Errorf("exit %d, want 0", c)
		}
		if rep := readReport(t, out); rep.Outcome != report.Passed {
			t.Errorf("report %s", rep.Outcome)
		}
	})
	t.Run("without --client-report", func(t *testing.T) {
		r := runSim(t)
		r.get("/api/public-feed?limit=1&key="+r.info["proKey"].(string), "")
		if c := r.stop(); c != 0 {
			t.Errorf("exit %d, want 0: the verdict is the report's business", c)
		}
	})
}

func readReport(t *testing.T, dir string) report.Report {
	t.Helper()
	var rep report.Report
	raw, err := os.ReadFile(filepath.Join(dir, report.ClientJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// A named fault (--fault, TCM_SIM_FAULT) is shown in the banner, in
// GET /_control/info and in GET /_control/faults: this simulator breaks the
// contract on purpose, and whoever reads it must know.
func TestNamedFaultShown(t *testing.T) {
	t.Setenv("TCM_SIM_FAULT", "rate-limit-21")
	r := runSim(t)
	if banner := r.out.waitFor("clients:"); !strings.Contains(banner, "faults:      rate-limit-21 (breaks RATE-LIMIT-429): it breaks the contract on purpose") {
		t.Errorf("banner:\n%s", banner)
	}
	_, body := r.get("/_control/info", "")
	var info struct {
		NamedFaults []string `json:"namedFaults"`
	}
	if err := json.Unmarshal(body, &info); err != nil || len(info.NamedFaults) != 1 || info.NamedFaults[0] != "rate-limit-21" {
		t.Errorf("info: %s", body)
	}
	_, body = r.get("/_control/faults", "")
	if !strings.Contains(string(body), `"named":"rate-limit-21"`) {
		t.Errorf("faults: %s", body)
	}
	r.stop()
}
