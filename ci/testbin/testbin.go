// Package testbin builds the programs that tests run as processes (a
// command, or a package's test binary) into a directory that outlives the
// test: the go command leaves an output file that is up to date as it is,
// so a test run after no change to the program's sources links nothing. A
// link is a second or more of CPU; go test ./... made ten of them in
// t.TempDir() before.
//
// The directory is in os.TempDir(), one per module root (two clones never
// share a binary). The go command writes a new binary beside the old one
// and renames it over, so a process that runs the old one meanwhile (a
// concurrent go test of the same clone) keeps it whole.
package testbin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

var (
	mu    sync.Mutex
	built = map[string]string{} // "build ./cmd/x" → the binary's path
)

// Command builds the main package pkg (relative to the module root, like
// "./cmd/tcmkit") and returns the binary's path; the binary is named as
// the package's directory, so it can go on PATH.
func Command(pkg string) (string, error) {
	return buildOnce("build", pkg, filepath.Base(pkg))
}

// Test builds the test binary of pkg (relative to the module root, like
// "./suites": go test -c) and returns its path.
func Test(pkg string) (string, error) {
	name := strings.ReplaceAll(strings.Trim(filepath.ToSlash(filepath.Clean(pkg)), "./"), "/", "-")
	if name == "" {
		name = "root"
	}
	return buildOnce("test", pkg, name+".test")
}

// buildOnce builds pkg once per process: within one test binary the
// sources do not change.
func buildOnce(verb, pkg, name string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[verb+" "+pkg]; ok {
		return p, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "tcmkit-testbin-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	out := filepath.Join(dir, name)
	args := []string{"build", "-o", out, pkg}
	if verb == "test" {
		args = []string{"test", "-c", "-o", out, pkg}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testbin: go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	built[verb+" "+pkg] = out
	return out, nil
}

// moduleRoot is the nearest directory above the working directory (a
// test's is its package's) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testbin: no go.mod above the working directory")
		}
		dir = parent
	}
}
