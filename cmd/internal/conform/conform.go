// Package conform is the conform command (tcmkit conform): the conformance
// suite of package suites/conformance run without go test, against --target
// or, without one, the bundled simulator. Its specs, settings (flags and
// TCM_* variables), reports and exit status are those of
// `go tool ginkgo ./suites -- …`; Ginkgo's label filter, focus and reports
// are flags of its own.
package conform

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"

	"github.com/tcmkit/tcmkit/cmd/internal/cli"
	"github.com/tcmkit/tcmkit/suites/conformance"
)

// About is what the command does, for its help and the kit's list of
// commands.
const About = "Judges a server of the Tracked-Channel Monitoring API with the conformance suite and writes the reports."

const about = About + `
Without --target it judges the bundled simulator. The reports (conformance-report.{json,md,html})
go to --report-dir, relative to where you run it; the path is printed at the end.`

const notes = `Labels: health auth pro pagination events videos isolation errors rate-limit strict
(strict runs only when --label-filter names it). The same run with Go and a clone:
  go tool ginkgo ./suites -- --target URL --pro-key KEY
Exit status: 0 passed: the run finished and the target conforms (the summary names first every
must requirement no spec verified; --require-all makes them fail the run); 1 failed: the run
finished and a spec found that the target does not conform (or --require-all and a must
requirement not verified); 2 refused: a bad setting or a key in the wrong role (one line, before
anything runs; --list too), or a filter that selected no spec or none that judged a must requirement;
3 incomplete: the run did not finish (its --run-deadline, an interrupt or SIGHUP, a --max-wait you
set that stopped a spec, a target that could not be judged): never passed, the failures found before
its end are named.`

// Ginkgo are the settings of the run that the suite leaves to Ginkgo.
type Ginkgo struct {
	LabelFilter string   `ff:"placeholder=EXPR, long=label-filter, usage='run the specs whose labels match, such as auth||pro (a Ginkgo label filter)'"`
	Focus       cli.List `ff:"placeholder=REGEXP, long=focus, usage='run only the specs whose text matches; repeatable'"`
	Skip        cli.List `ff:"placeholder=REGEXP, long=skip, usage='leave out the specs whose text matches; repeatable'"`
	JUnitReport string   `ff:"placeholder=FILE, long=junit-report, usage='also write Ginkgo JUnit report to this file'"`
	JSONReport  string   `ff:"placeholder=FILE, long=json-report, usage='also write Ginkgo JSON report to this file'"`
	Verbose     bool     `ff:"short=v, long=verbose, usage='print every spec as it runs'"`
	NoColor     bool     `ff:"long=no-color, usage='no colours in the output'"`
}

// listing is the command's own setting: a list instead of a run.
type listing struct {
	List bool `ff:"long=list, usage='print the specs a run would run (after --label-filter, --focus, --skip), the requirements each checks and the request budget, and exit; no request is sent'"`
}

// Run is the command named name ("tcmkit conform"): it returns the exit
// status. Ginkgo runs once in a process: Run may be called once.
func Run(name string, args []string, stdout, stderr io.Writer) int {
	cfg := conformance.NewConfig()
	var g Ginkgo
	cmd := cli.Command{Name: name, Usage: name + " [--target URL --pro-key KEY] [flags]", About: about, Notes: notes, EnvPrefix: conformance.EnvPrefix}
	var l listing
	if p := parallelFlag(args); p != "" {
		fmt.Fprintf(stderr, "%s: %s runs Ginkgo's parallel processes, which only its own command starts: go tool ginkgo -p ./suites -- [flags] (against the bundled simulator); %s runs in one process\n", name, p, name)
		return 2
	}
	if err := cmd.Parse(cfg, args, stdout, &g, &l); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", name, err)
		return 2
	}
	if err := g.apply(flag.CommandLine); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	if dir, err := filepath.Abs(cfg.ReportDir); err == nil {
		cfg.ReportDir = dir // relative to where the user is
	}
	cfg.Log = stderr
	var t stand
	if l.List {
		err := conformance.List(&t, *cfg, stdout) // a bad setting: said in one line
		return conformance.ExitStatus(err, t.failed.Load())
	}
	quiet := quietOnInterrupt(name, stderr)
	defer quiet()
	defer hangupInterrupts()()
	err := conformance.Run(&t, *cfg)
	return conformance.ExitStatus(err, t.failed.Load())
}

// parallelFlag is Ginkgo's -p (or --procs) among args, as given, or "".
func parallelFlag(args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "p" || name == "procs" || name == "ginkgo.p" || name == "ginkgo.procs") {
			return a
		}
	}
	return ""
}

// quietOnInterrupt makes Ctrl-C one line: Ginkgo, which handles the signal
// (it skips the specs left, then runs the cleanup and the reports), prints
// a progress report with the goroutines' stacks, which helps whoever
// debugs a spec and nobody who pressed Ctrl-C. From the signal on, Ginkgo's
// output (its reporter writes to formatter.ColorableStdOut) is dropped; the
// suite's summary, on stderr, still says where the reports are. The
// returned function puts things back.
func quietOnInterrupt(name string, stderr io.Writer) func() {
	q := &quietWriter{w: formatter.ColorableStdOut}
	formatter.ColorableStdOut = q
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
			q.off.Store(true)
			fmt.Fprintf(stderr, "\n%s: interrupted: the specs left are skipped; the reports say what ran\n", name)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
		formatter.ColorableStdOut = q.w
	}
}

// hangupInterrupts makes SIGHUP (the terminal closed) end a run as an
// interrupt does: the specs left are skipped, the reports written, the run
// incomplete. Ginkgo and the preflight listen for SIGINT and SIGTERM only,
// and SIGHUP would kill the process with no report: it is sent on to this
// process as SIGINT. The returned function stops that.
func hangupInterrupts() func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				if p, err := os.FindProcess(os.Getpid()); err == nil {
					p.Signal(os.Interrupt)
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// quietWriter passes writes through until off; the progress report of an
// interrupt turns it off too, should it come before the signal is seen
// here.
type quietWriter struct {
	w   io.Writer
	off atomic.Bool
}

func (q *quietWriter) Write(p []byte) (int, error) {
	if !q.off.Load() && bytes.Contains(p, []byte("Interrupted by User")) {
		q.off.Store(true)
	}
	if q.off.Load() {
		return len(p), nil
	}
	return q.w.Write(p)
}

// apply hands the settings to Ginkgo, whose configuration lives in the
// ginkgo.* flags it put on std (flag.CommandLine).
func (g Ginkgo) apply(std *flag.FlagSet) error {
	set := []struct {
		name   string
		values []string
	}{
		{"label-filter", []string{g.LabelFilter}}, {"focus", g.Focus}, {"skip", g.Skip},
		{"junit-report", []string{g.JUnitReport}}, {"json-report", []string{g.JSONReport}},
		{"v", []string{strconv.FormatBool(g.Verbose)}}, {"no-color", []string{strconv.FormatBool(g.NoColor)}},
	}
	for _, s := range set {
		for _, v := range s.values {
			if v == "" {
				continue
			}
			if err := std.Set("ginkgo."+s.name, v); err != nil {
				return fmt.Errorf("--%s: %w", s.name, err)
			}
		}
	}
	return nil
}

// stand is the test that conformance.Run runs in, without go test: it
// fails when a spec does, and has no deadline but the run's.
type stand struct{ failed atomic.Bool }

func (t *stand) Fail()                       { t.failed.Store(true) }
func (t *stand) Deadline() (time.Time, bool) { return time.Time{}, false }

var _ ginkgo.GinkgoTestingT = (*stand)(nil)
