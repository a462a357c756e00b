// Package record is the record command (tcmkit record): it records an
// account of a server of the Tracked-Channel Monitoring API into a world
// that tcmkit simulate --world FILE serves (package suites/record does the
// work). Every flag has an environment variable (TCM_RECORD_ and the
// flag's name in upper case, - as _), in the dialect of package
// schemas/settings.
package record

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tcmkit/tcmkit/cmd/internal/cli"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/record"
)

// About is what the command does, for its help and the kit's list of
// commands.
const About = "Records an account of a server (its feed and tracked videos) into a world that tcmkit simulate --world serves."

const notes = `It walks the Pro account's whole feed (limit 200), the free account's if --free-key is given,
then asks tracked videos for every video it saw (20 ids a request), at most 20 requests a minute
per key, honouring every Retry-After. Keys go to the target's origin only (no redirect is
followed) and into no file or line: the recording's accounts get fresh keys when served.
Progress goes to FILE.partial (written whole, then renamed): the same command resumes it.
An answer no world can hold (a time out of 1970..9999, an invalid event) stops it at once, named;
events whose id repeats an earlier one with other content are dropped, named in the recording.
Zero for a bound is its default; -1 is none (not for the waits).
Exit status: 0 when the recording is written (a bound may have cut it: it says so), 1 when it
stopped (progress kept) or had to drop events (named), 2 for a bad setting.
  tcmkit record --target https://staging.example --pro-key "$KEY" --out world.json
  tcmkit simulate --world world.json            # serve it, growing; --frozen: as recorded`

// Settings are the command's flags and variables.
type Settings struct {
	Target       string        `ff:"placeholder=URL, long=target, usage='base URL of the server to record; keys go to its origin only'"`
	ProKey       string        `ff:"placeholder=KEY, long=pro-key, usage='the Pro account to record: its feed and its tracked videos'"`
	FreeKey      string        `ff:"placeholder=KEY, long=free-key, usage='a free account whose feed (its tracking) is recorded too'"`
	Out          string        `ff:"placeholder=FILE, long=out, usage='the recording (the simulator import format); progress in FILE.partial'"`
	MaxEvents    int           `ff:"long=max-events, usage='events recorded at most (the newest); -1: no bound'"`
	MaxRequests  int           `ff:"long=max-requests, usage='requests sent at most, 429s included; -1: no bound'"`
	MaxBytes     int64         `ff:"long=max-bytes, usage='bytes of answers kept at most; -1: no bound'"`
	MaxWait      time.Duration `ff:"long=max-wait, usage='the longest Retry-After honoured; a longer one stops the recording (resume later)'"`
	MaxTotalWait time.Duration `ff:"long=max-total-wait, usage='what the server may make it wait in all (Retry-After, backoff after a 5xx); past it the recording ends, cut'"`
}

// Defaults are the settings before the environment and the flags.
func Defaults() Settings {
	return Settings{
		Out: "world.json", MaxEvents: record.DefaultMaxEvents, MaxRequests: record.DefaultMaxRequests,
		MaxBytes: record.DefaultMaxBytes, MaxWait: record.DefaultMaxWait, MaxTotalWait: record.DefaultMaxTotalWait,
	}
}

// Run is the command named name without the process: it records until
// done or ctx ends, and returns the exit status.
func Run(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	s := Defaults()
	cmd := cli.Command{Name: name, Usage: name + " --target URL --pro-key KEY [--free-key KEY] --out FILE [flags]",
		About: About, Notes: notes, EnvPrefix: "TCM_RECORD"}
	if err := cmd.Parse(&s, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", name, err)
		return 2
	}
	// Whatever is written goes through the redactor: an error quoting a
	// target's answer, a line of progress.
	red := redact.New(s.ProKey, s.FreeKey)
	errw := red.Writer(stderr)
	defer errw.Flush()
	if s.Target == "" || s.ProKey == "" {
		fmt.Fprintf(errw, "%s: --target and --pro-key are required (see --help)\n", name)
		return 2
	}
	r := &record.Recorder{Target: s.Target, ProKey: s.ProKey, FreeKey: s.FreeKey, Out: s.Out,
		MaxEvents: s.MaxEvents, MaxRequests: s.MaxRequests, MaxBytes: s.MaxBytes, MaxWait: s.MaxWait, MaxTotalWait: s.MaxTotalWait, Log: errw}
	// Every setting is checked before a request: a bad one is exit 2, in
	// one line.
	if err := r.Check(); err != nil {
		fmt.Fprintf(errw, "%s: %v (see --help)\n", name, err)
		return 2
	}
	res, err := r.Run(ctx)
	if err != nil {
		fmt.Fprintf(errw, "%s: %v\n", name, err)
		return 1
	}
	out := red.Writer(stdout)
	defer out.Flush()
	fmt.Fprintf(out, "recorded %s into %s (%d bytes) in %s, %s of it waiting for the rate limit\n  serve it: tcmkit simulate --world %s\n",
		res.Recording.String(), s.Out, res.Bytes, res.Took.Round(time.Second), res.Waited.Round(time.Second), s.Out)
	if d := res.Recording.Dropped; len(d) > 0 {
		fmt.Fprintf(errw, "%s: %s: %s (the recording's \"dropped\" names them)\n", name, s.Out, d[0])
		return 1
	}
	return 0
}
