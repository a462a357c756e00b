package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A function one line over the limit is found, one at the limit is not;
// testdata is skipped, methods are named with their type.
func TestLonger(t *testing.T) {
	dir := t.TempDir()
	body := func(name string, lines int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	src := "package p\n\ntype T struct{}\n\n" + body("atLimit", 10) + body("over", 11) + "func (t *T) " + strings.TrimPrefix(body("method", 12), "func ")
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "testdata", "q.go"), []byte("package q\n\n"+body("ignored", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := longer(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].name != "T.method" || got[0].lines != 12 || got[1].name != "over" || got[1].lines != 11 {
		t.Errorf("longer = %+v, want T.method (12) and over (11)", got)
	}
}
