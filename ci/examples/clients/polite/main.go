// Command polite is an example client of the Tracked-Channel Monitoring
// API that keeps every client requirement (package ../tcmclient): it
// checks the API's health, reads the whole feed, asks for the tracked
// videos of the events it read, and then syncs the feed a few times.
//
//	TCM_BASE_URL=http://127.0.0.1:8080 TCM_PRO_KEY=tcm_... polite [--polls 3] [--interval 20s]
//
// The key is read from the environment only: a command line is visible to
// every user of the machine. With --advance-clock it waits by moving the
// clock of a simulator with a manual clock (TCM_CONTROL_URL, and
// TCM_CONTROL_TOKEN if it has one) instead of sleeping, as a test does.
// It prints what it did, and its requests and wall time; a revoked key, or
// any error it cannot mend, ends it with status 1 and says why.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/tcmkit/tcmkit/ci/examples/clients/tcmclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("polite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	baseURL := fs.String("url", os.Getenv("TCM_BASE_URL"), "the API's base URL (default $TCM_BASE_URL)")
	polls := fs.Int("polls", 3, "syncs of the feed after the first")
	interval := fs.Duration("interval", 20*time.Second, "time between two syncs")
	videos := fs.Int("videos", 25, "tracked videos to ask for, from the events read")
	advance := fs.Bool("advance-clock", false, "wait by moving the simulator's manual clock ($TCM_CONTROL_URL) instead of sleeping")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	key := os.Getenv("TCM_PRO_KEY")
	if *baseURL == "" || key == "" {
		fmt.Fprintln(stderr, "polite: set TCM_BASE_URL (or --url) and TCM_PRO_KEY")
		return 2
	}
	c := tcmclient.New(*baseURL, key)
	c.Logf = func(format string, a ...any) { fmt.Fprintf(stdout, "  "+format+"\n", a...) }
	if *advance {
		c.Clock = tcmclient.NewSimulatorClock(os.Getenv("TCM_CONTROL_URL"), os.Getenv("TCM_CONTROL_TOKEN"))
	}
	start := time.Now()
	err := session(ctx, c, *polls, *interval, *videos, stdout)
	fmt.Fprintf(stdout, "polite: %d requests, %.1f s wall time\n", c.Requests, time.Since(start).Seconds())
	if err != nil {
		fmt.Fprintf(stderr, "polite: %v\n", err)
		return 1
	}
	return 0
}

// session is what the client does with the API.
func session(ctx context.Context, c *tcmclient.Client, polls int, interval time.Duration, videos int, out io.Writer) error {
	if err := c.Health(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "health: ok")
	feed := &tcmclient.Feed{Client: c}
	events, err := feed.Sync(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "feed: %d events\n", len(events))
	var ids []string
	seen := map[string]bool{}
	for _, e := range events {
		if e.Video != nil && !seen[e.Video.PlatformVideoID] && len(ids) < videos {
			seen[e.Video.PlatformVideoID] = true
			ids = append(ids, e.Video.PlatformVideoID)
		}
	}
	if len(ids) > 0 {
		v, err := c.Videos(ctx, ids)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "tracked videos: %d of %d ids (%d missing)\n", len(v.Videos), len(ids), len(v.MissingVideoIDs))
	}
	for i := range polls {
		if err := c.Clock.Sleep(ctx, interval); err != nil {
			return err
		}
		fresh, err := feed.Sync(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "sync %d: %d new events (%d in all)\n", i+1, len(fresh), feed.Len())
	}
	return nil
}
