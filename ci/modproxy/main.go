// Command modproxy writes one version of a module, made from a git revision
// of its repository, into a directory laid out as a Go module proxy (the
// GOPROXY protocol: <module>/@v/list, <version>.info, .mod and .zip), so that
// `GOPROXY=file://DIR go install <module>/cmd/…@<version>` installs exactly
// that revision, as it would from the Go module proxy once tagged:
//
//	go run ./ci/modproxy -repo . -rev HEAD -version v0.1.0 -out /tmp/proxy
//
// The zip is golang.org/x/mod/zip's, of the committed files of the revision
// (git archive): without nested modules (ci/browser, ci/gocodegen, this
// one) or anything git ignores, checked against the module zip rules.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func main() {
	repo := flag.String("repo", ".", "the git repository of the module (its go.mod at the root)")
	rev := flag.String("rev", "HEAD", "the git revision to publish")
	version := flag.String("version", "v0.1.0", "the version to publish it as (semver)")
	out := flag.String("out", "", "the proxy directory to write (GOPROXY=file://DIR)")
	flag.Parse()
	if err := run(*repo, *rev, *version, *out); err != nil {
		fmt.Fprintf(os.Stderr, "modproxy: %v\n", err)
		os.Exit(1)
	}
}

func run(repo, rev, version, out string) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	gomod, err := git(repo, "show", rev+":go.mod")
	if err != nil {
		return err
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return fmt.Errorf("no module path in %s:go.mod", rev)
	}
	m := module.Version{Path: path, Version: version}
	if err := module.Check(m.Path, m.Version); err != nil {
		return err
	}
	when, err := git(repo, "show", "-s", "--format=%cI", rev)
	if err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(when)))
	if err != nil {
		return err
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The revision's files (git archive: committed, nothing ignored), then
	// the zip of them (git worktrees are not a VCS to CreateFromVCS).
	tree, err := os.MkdirTemp("", "modproxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tree)
	archive := exec.Command("sh", "-c", `git archive --format=tar "$1" | tar -x -C "$2"`, "sh", rev, tree)
	archive.Dir = repo
	if msg, err := archive.CombinedOutput(); err != nil {
		return fmt.Errorf("git archive %s: %v: %s", rev, err, msg)
	}
	var zip bytes.Buffer
	if err := modzip.CreateFromDir(&zip, m, tree); err != nil {
		return fmt.Errorf("module zip: %w", err)
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, t.UTC()})
	for name, data := range map[string][]byte{
		version + ".info": info,
		version + ".mod":  gomod,
		version + ".zip":  zip.Bytes(),
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s@%s: %s (zip %d KiB)\n", path, version, dir, zip.Len()>>10)
	return nil
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
