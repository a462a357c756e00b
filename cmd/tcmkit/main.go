// Command tcmkit is the Tracked-Channel Monitoring API conformance kit in
// one binary:
//
//	tcmkit conform --target URL --pro-key KEY   # judge a server (the conformance suite)
//	tcmkit simulate --speed 60                  # serve the API from a seeded world
//	tcmkit record --target URL --pro-key KEY    # record an account into a world to serve
//	tcmkit fixtures --kind FeedPage --count 10  # seeded fixtures, valid or invalid
//	tcmkit version
//	source <(tcmkit completion bash)            # completion: bash, zsh or fish
//
// Install it from a clone with
//
//	go install ./cmd/tcmkit
//
// (go install github.com/tcmkit/tcmkit/cmd/tcmkit@latest once the module is
// published), or download a release binary (ci/release.sh makes them).
//
// Every subcommand's flag has an environment variable (tcmkit COMMAND
// --help lists them), in the one dialect of package schemas/settings.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/tcmkit/tcmkit/cmd/internal/conform"
	"github.com/tcmkit/tcmkit/cmd/internal/fixtures"
	"github.com/tcmkit/tcmkit/cmd/internal/record"
	"github.com/tcmkit/tcmkit/cmd/internal/simulate"
	"github.com/tcmkit/tcmkit/schemas/settings"
	"github.com/tcmkit/tcmkit/suites/conformance"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// subcommand is one job of the kit.
type subcommand struct {
	name  string
	about string
	run   func(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int
}

var subcommands = []subcommand{
	{"conform", conform.About, func(_ context.Context, name string, args []string, stdout, stderr io.Writer) int {
		return conform.Run(name, args, stdout, stderr) // Ginkgo handles the signals
	}},
	{"simulate", simulate.About, simulate.Run},
	{"record", record.About, record.Run},
	{"fixtures", fixtures.About, fixtures.Run},
	{"version", "Prints the version of the kit, of the suite and of Go.", func(_ context.Context, name string, args []string, stdout, stderr io.Writer) int {
		if len(args) > 0 && args[0] != "--help" && args[0] != "-h" {
			fmt.Fprintf(stderr, "%s: unexpected argument %q\n", name, args[0])
			return 2
		}
		fmt.Fprintln(stdout, version())
		return 0
	}},
}

// The completion command reads the list of commands, so it joins the list
// here rather than in it (an initialization cycle otherwise).
func init() {
	subcommands = append(subcommands, subcommand{"completion", completionAbout, completion})
}

const usage = `tcmkit: the Tracked-Channel Monitoring API conformance kit

USAGE
  tcmkit COMMAND [flags]        tcmkit COMMAND --help lists its flags

COMMANDS
%s
EXAMPLES
  tcmkit conform                                  # the suite against the bundled simulator
  tcmkit conform --target URL --pro-key KEY       # against your server; reports in ./reports
  tcmkit simulate --speed 60 --info-file sim.json # a mock server for your client's tests
  tcmkit record --target URL --pro-key KEY --out world.json && tcmkit simulate --world world.json
  tcmkit fixtures --invalid --labels --kind FeedPage

Exit status: 0 on success, 1 when a run failed, 2 for a bad command or flag;
tcmkit simulate --client-report: 3 when a client failed, 4 when none was judged.
`

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		help(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help", "help":
		if len(args) > 1 && name == "help" {
			return run(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		help(stdout)
		return 0
	case "-v", "--version":
		name = "version"
	}
	var names []string
	for _, c := range subcommands {
		if c.name == name {
			return c.run(ctx, "tcmkit "+c.name, args[1:], stdout, stderr)
		}
		names = append(names, c.name)
	}
	hint := ""
	if s := settings.Suggest(name, names); s != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", s)
	}
	if strings.HasPrefix(name, "-") {
		fmt.Fprintf(stderr, "tcmkit: %s before a command%s: the flags are the command's (tcmkit --help)\n", name, hint)
		return 2
	}
	fmt.Fprintf(stderr, "tcmkit: unknown command %q%s (tcmkit --help)\n", name, hint)
	return 2
}

// help prints the commands.
func help(w io.Writer) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 3, ' ', 0)
	for _, c := range subcommands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.about)
	}
	tw.Flush()
	fmt.Fprintf(w, usage, b.String())
}

// release is the version a build names with -ldflags "-X main.release=…"
// (the Containerfile's VERSION); empty: the module's.
var release string

// version is the module's version (v1.2.3 when installed with go install
// …@v1.2.3, (devel) when built from a clone), its commit when known, the
// suite's and Go's.
func version() string {
	v, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		if release != "" {
			v = release
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " " + s.Value[:12]
			}
		}
	}
	return fmt.Sprintf("tcmkit %s%s (%s, %s, %s/%s)", v, rev, conformance.SuiteVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
