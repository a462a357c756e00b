//go:build unix

package outfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// openWriter opens path for writing without blocking: a FIFO with no
// reader yet (ENXIO) is tried again every 50 ms until ctx ends. The file
// is non-blocking, so that its writes wait in the runtime's poller, where
// a deadline ends them.
func openWriter(ctx context.Context, path string, flag int, perm fs.FileMode) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|flag, perm)
		if !errors.Is(err, syscall.ENXIO) {
			return f, err
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("no reader came to the FIFO: " + context.Cause(ctx).Error())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// writable says whether this process may write path.
func writable(path string) error {
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// links is how many names a file has.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
