// Package outfile writes the files whose path a user names (tcmkit
// simulate --info-file, tcmkit record --out, the report files in
// --report-dir and --client-report): what is at the path decides how, so
// that nothing the user put there is replaced by something else.
//
//   - Nothing there, or a regular file: the file is written whole under a
//     temporary name beside it, then renamed into place, so that a reader
//     polling for it, or a crash, never meets half of it. A file with other
//     names (hard links) is written in place instead, so the names stay one
//     file. The mode is the one asked for, never looser than the file's.
//   - A symbolic link: followed. The file it names is written as above (the
//     link stays a link); a link to nothing creates what it names.
//   - A FIFO or a character device (/dev/stdout, /dev/null, a terminal):
//     written through, in place, never replaced; a FIFO's writer waits for a
//     reader, until the context ends. /dev/full fails, as writing to it does.
//   - A directory, a socket or a block device: refused, with what it is.
package outfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Write writes b to path as what is there asks (see the package doc),
// within ctx: a FIFO nobody reads stops waiting when ctx ends.
func Write(ctx context.Context, path string, b []byte, perm fs.FileMode) error {
	how, target, err := plan(path)
	if err != nil {
		return err
	}
	switch how {
	case replace:
		return writeAtomic(target, b, perm)
	case create:
		return writeThrough(ctx, target, b, os.O_CREATE|os.O_TRUNC, perm)
	case inPlace:
		return writeThrough(ctx, target, b, os.O_TRUNC, perm)
	default: // through: a FIFO or a character device
		return writeThrough(ctx, target, b, 0, perm)
	}
}

// Check says, before any work, whether Write could write path: the
// directory of a file to create or replace exists (it is made) and may be
// written to, a FIFO or a device may be opened for writing, and the path
// is none of what Write refuses.
func Check(path string) error {
	how, target, err := plan(path)
	if err != nil {
		return err
	}
	switch how {
	case replace:
		dir := filepath.Dir(target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("%s: want a directory: %w", path, err)
		}
		f, err := os.CreateTemp(dir, ".tcmkit-check-*")
		if err != nil {
			return fmt.Errorf("%s: want a directory we may write to: %w", path, err)
		}
		f.Close()
		return os.Remove(f.Name())
	case create:
		// The link's target is made when written: its directory must be
		// there, and may be written to (a link into a directory that is
		// gone would fail only at the write, after all the work).
		end, err := linkEnd(path)
		if err != nil {
			return fmt.Errorf("%s: a link that leads nowhere: %w", path, err)
		}
		f, err := os.CreateTemp(filepath.Dir(end), ".tcmkit-check-*")
		if err != nil {
			return fmt.Errorf("%s: a link to %s, which cannot be made: %w", path, end, err)
		}
		f.Close()
		return os.Remove(f.Name())
	default:
		if err := writable(target); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
}

// linkEnd is the path a chain of symbolic links that begins at path ends
// at (that path itself not there).
func linkEnd(path string) (string, error) {
	for range 40 { // as the kernel's bound on a chain
		li, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if li.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return "", fmt.Errorf("too many links")
}

// how is the way a path is written.
type how int

const (
	replace how = iota // a new file or a regular one: whole, then renamed into place
	create             // a symbolic link to nothing: the file it names is created
	inPlace            // a regular file of several names: truncated and written
	through            // a FIFO or a character device: opened and written
)

// plan says how path is written, and which path is then written: the file
// a symbolic link names, or path itself.
func plan(path string) (how, string, error) {
	li, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return replace, path, nil
	}
	if err != nil {
		return 0, "", err
	}
	fi := li
	target := path
	if li.Mode()&fs.ModeSymlink != 0 {
		fi, err = os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return create, path, nil // opened through the link, which creates its target
		}
		if err != nil {
			return 0, "", err
		}
		if fi.Mode().IsRegular() {
			// The file the link names is replaced, not the link; a name
			// that does not resolve (/proc/self/fd/1 of a pipe) is written
			// through.
			real, err := filepath.EvalSymlinks(path)
			if err != nil {
				return inPlace, path, nil
			}
			target = real
		}
	}
	m := fi.Mode()
	switch {
	case m.IsRegular() && links(fi) > 1:
		return inPlace, target, nil
	case m.IsRegular():
		return replace, target, nil
	case m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		return through, target, nil
	case m.IsDir():
		return 0, "", fmt.Errorf("%s is a directory: name a file", path)
	case m&fs.ModeSocket != 0:
		return 0, "", fmt.Errorf("%s is a socket: name a file, a FIFO or a character device", path)
	case m&fs.ModeDevice != 0:
		return 0, "", fmt.Errorf("%s is a block device: name a file, a FIFO or a character device", path)
	}
	return 0, "", fmt.Errorf("%s is neither a file, a FIFO nor a character device (%s)", path, m.Type())
}

// writeAtomic writes b whole under a temporary name beside path, then
// renames it over path: a crash leaves the old file or the new one. The
// mode is perm, and no looser than the file it replaces.
func writeAtomic(path string, b []byte, perm fs.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		perm &= fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// writeThrough opens path for writing (with flag: create, truncate) and
// writes b, in place; a FIFO is waited for until a reader comes or ctx
// ends, and so is a write it holds back.
func writeThrough(ctx context.Context, path string, b []byte, flag int, perm fs.FileMode) error {
	f, err := openWriter(ctx, path, flag, perm)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Now()) })
	_, err = f.Write(b)
	stop()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, context.Cause(ctx))
		}
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
