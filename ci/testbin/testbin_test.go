package testbin

import (
	"os"
	"path/filepath"
	"testing"
)

// A second build of an unchanged command keeps its binary (the go command
// only touches it). (Test's binaries: suites/selftest and suites/killmatrix.)
func TestUnchangedBinaryIsNotLinkedAgain(t *testing.T) {
	bin, err := Command("./cmd/hostile")
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(bin)
	if err != nil || before.Mode()&0o111 == 0 {
		t.Fatalf("no executable at %s: %v", bin, err)
	}
	if filepath.Base(bin) != "hostile" {
		t.Errorf("the binary is %s, want it named hostile (for PATH)", bin)
	}
	mu.Lock()
	clear(built) // as a new test process would start
	mu.Unlock()
	again, err := Command("./cmd/hostile")
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(again)
	if err != nil || again != bin {
		t.Fatalf("the second build is at %s (%v), want %s", again, err, bin)
	}
	if !os.SameFile(before, after) { // a link writes a new file and renames it over
		t.Errorf("the unchanged binary was linked again")
	}
}
