//go:build unix

package simulate

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/outfile/outfiletest"
)

// TestWorldFromAFIFO: --world reads a stream (a FIFO) as it reads a file:
// an export comes whole and is served; garbage is refused at once.
func TestWorldFromAFIFO(t *testing.T) {
	export := exported(t, 3)
	for _, tc := range []struct {
		name string
		body []byte
		code int
		want string
	}{
		{"an export", export, 0, "exported at 2026-03-02T08:00:00Z"},
		{"garbage", bytes.Repeat([]byte{0}, 1<<20), 2, "not a JSON object"},
		{"an export and more", append(bytes.Clone(export), "{}"...), 2, "data after the end"},
	} {
		fifo := filepath.Join(t.TempDir(), "world.fifo")
		outfiletest.FIFO(t, fifo)
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.Write(tc.body) // a refusal closes the read end: the write fails
			f.Close()
		}()
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		var stderr bytes.Buffer
		code := make(chan int, 1)
		go func() {
			code <- run(ctx, []string{"--addr", "127.0.0.1:0", "--speed", "0", "--world", fifo}, pw, &stderr)
			pw.Close()
		}()
		head, _ := bufio.NewReader(pr).ReadString('\n')
		go io.Copy(io.Discard, pr)
		cancel()
		c := <-code
		if c != tc.code || !strings.Contains(head+stderr.String(), tc.want) {
			t.Errorf("%s: exit %d, %q %q; want exit %d and %q", tc.name, c, head, stderr.String(), tc.code, tc.want)
		}
	}
}
