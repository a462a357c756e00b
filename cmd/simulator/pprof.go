//go:build pprof

// Built with -tags pprof (ci/load/bench.sh PROFILE=DIR), the simulator
// serves net/http/pprof on a second listener, TCM_PPROF_ADDR (default
// 127.0.0.1:0), and writes the address it got to the file TCM_PPROF_FILE,
// if set: CPU profiles of the simulator under load.
package main

import (
	"log"
	"net"
	"net/http"
	_ "net/http/pprof" // the profiles, on http.DefaultServeMux
	"os"
)

func init() {
	addr := os.Getenv("TCM_PPROF_ADDR")
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	if f := os.Getenv("TCM_PPROF_FILE"); f != "" {
		if err := os.WriteFile(f, []byte(ln.Addr().String()), 0o600); err != nil {
			log.Fatal(err)
		}
	}
	go func() { log.Print(http.Serve(ln, nil)) }()
}
