// Command simulator is `tcmkit simulate` under its own name (for scripts
// and the image of before): it serves the Tracked-Channel Monitoring API
// from a seeded, evolving world on 127.0.0.1. See package
// cmd/internal/simulate, or run it with --help.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tcmkit/tcmkit/cmd/internal/simulate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(simulate.Run(ctx, "simulator", os.Args[1:], os.Stdout, os.Stderr))
}
