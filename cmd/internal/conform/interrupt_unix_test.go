//go:build unix

package conform

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/formatter"
)

// TestInterruptIsOneLine: after SIGINT, Ginkgo's output (its progress
// report with the goroutines' stacks) is dropped and the command says one
// line of its own; before it, Ginkgo's output passes.
func TestInterruptIsOneLine(t *testing.T) {
	var ginkgoOut bytes.Buffer
	saved := formatter.ColorableStdOut
	formatter.ColorableStdOut = &ginkgoOut
	t.Cleanup(func() { formatter.ColorableStdOut = saved })
	var stderr lockedBuffer
	restore := quietOnInterrupt("tcmkit conform", &stderr)
	fmt.Fprint(formatter.ColorableStdOut, "•••")
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "interrupted") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Fprint(formatter.ColorableStdOut, "Here's a current progress report:\n  goroutine 38 [select]\n")
	restore()
	if got := ginkgoOut.String(); got != "•••" {
		t.Errorf("Ginkgo's output: %q, want only what came before the interrupt", got)
	}
	if got := strings.TrimSpace(stderr.String()); strings.Count(got, "\n") != 0 || !strings.HasPrefix(got, "tcmkit conform: interrupted") {
		t.Errorf("stderr %q: want one line", got)
	}
	if formatter.ColorableStdOut != io.Writer(&ginkgoOut) {
		t.Error("Ginkgo's writer not put back")
	}

	q := &quietWriter{w: &ginkgoOut}
	fmt.Fprint(q, "Interrupted by User\n")
	fmt.Fprint(q, "goroutine 1\n")
	if strings.Contains(ginkgoOut.String(), "goroutine") || strings.Contains(ginkgoOut.String(), "Interrupted") {
		t.Errorf("the progress report passed: %q", ginkgoOut.String())
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
