//go:build !unix

package outfile

import (
	"context"
	"io/fs"
	"os"
)

func openWriter(_ context.Context, path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|flag, perm)
}

func writable(string) error { return nil }

func links(fs.FileInfo) uint64 { return 1 }
