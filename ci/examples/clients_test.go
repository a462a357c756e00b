package examples

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/ci/testbin"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator/clients"
	"github.com/tcmkit/tcmkit/simulator/clienttest"
)

// The example clients, run as programs against the simulator (in this
// process, manual clock: their waits move the clock): the polite one
// passes every client requirement and every scenario, the rude one fails
// exactly the requirements it breaks, all of them.

// buildClients builds ci/examples/clients/{polite,rude} once (package
// testbin: not linked again while unchanged).
func buildClients(t *testing.T) (polite, rude string) {
	t.Helper()
	var err error
	if polite, err = testbin.Command("./ci/examples/clients/polite"); err != nil {
		t.Fatal(err)
	}
	if rude, err = testbin.Command("./ci/examples/clients/rude"); err != nil {
		t.Fatal(err)
	}
	return polite, rude
}

// runClient runs an example client against sim; it returns its exit
// status and what it printed.
func runClient(t *testing.T, bin string, sim *clienttest.Sim, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--advance-clock"}, args...)...)
	cmd.Env = append(os.Environ(), "TCM_BASE_URL="+sim.URL, "TCM_PRO_KEY="+sim.Keys.Pro, "TCM_CONTROL_URL="+sim.URL+"/_control")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String()
}

// inTrouble are the client rules that need a server in trouble (error
// answers, a cursor cycle): the fuzz schedule's planted clients break them
// (simulator/clienttest), the rude example cannot against a conforming
// server.
var inTrouble = []catalogue.ID{catalogue.ClientBackoff, catalogue.ClientCursorCycle}

func TestExampleClients(t *testing.T) {
	polite, rude := buildClients(t)
	t.Run("polite", func(t *testing.T) {
		t.Parallel()
		sim := clienttest.Start(t, clienttest.Options{})
		if code, out := runClient(t, polite, sim, "--polls", "3", "--interval", "20s"); code != 0 {
			t.Fatalf("polite: exit %d\n%s", code, out)
		}
	})
	t.Run("rude", func(t *testing.T) {
		t.Parallel()
		var all []catalogue.ID
		cat, err := catalogue.Load()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range cat.OfKind(catalogue.Client) {
			if !slices.Contains(inTrouble, q.ID) {
				all = append(all, q.ID)
			}
		}
		if len(all) != 8 {
			t.Fatalf("%d client requirements a conforming server can exercise; the rude client breaks 8", len(all))
		}
		sim := clienttest.Start(t, clienttest.Options{Expect: all})
		if code, out := runClient(t, rude, sim); code != 0 {
			t.Fatalf("rude: exit %d\n%s", code, out)
		}
		// One finding each, of one request each (CLIENT-RATE: two, the
		// 21st request in a minute and the retry at once after its 429).
		v, err := sim.Verdicts(t.Context(), true)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range v.Clients[0].Requirements {
			if slices.Contains(inTrouble, r.ID) {
				if r.Result != clients.NotExercised {
					t.Errorf("%s: %s, want not exercised against a conforming server", r.ID, r.Result)
				}
				continue
			}
			want := map[bool]int{true: 2, false: 1}[r.ID == catalogue.ClientRate]
			if r.Findings != 1 || r.Count != want {
				t.Errorf("%s: %d findings of %d requests, want 1 of %d", r.ID, r.Findings, r.Count, want)
			}
		}
	})
	for _, sc := range clients.Scenarios() {
		t.Run("polite in "+sc.Name, func(t *testing.T) {
			t.Parallel()
			sim := clienttest.Start(t, clienttest.Options{Scenario: sc.Name})
			code, out := runClient(t, polite, sim, "--polls", "2", "--interval", "20s")
			if sc.Name == "key-regenerated-mid-walk" {
				// It stops, and says why.
				if code != 1 || !strings.Contains(out, "401 revoked_api_key") || !strings.Contains(out, "generate a new one") {
					t.Errorf("polite with its key revoked: exit %d\n%s", code, out)
				}
				return
			}
			if code != 0 {
				t.Errorf("polite: exit %d\n%s", code, out)
			}
		})
	}
}
