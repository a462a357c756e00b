package schemas_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"testing"
)

// contractCopy is the contract as a clone has it; sharedContract is the
// shared specification it is copied from, beside the repository where the
// kit is developed.
const (
	contractCopy   = "contract/tracked-channel-monitoring-api.md"
	sharedContract = "../../shared/spec/tracked-channel-monitoring-api.md"
)

// TestContractCopy keeps the repository's copy of the contract identical
// to the shared specification, so that the link a newcomer follows never
// shows an older contract than the one the kit is built to.
func TestContractCopy(t *testing.T) {
	copied, err := os.ReadFile(contractCopy)
	if err != nil {
		t.Fatalf("the contract must be in the repository: %v", err)
	}
	if !bytes.Contains(copied, []byte("# Tracked-Channel Monitoring API")) {
		t.Fatalf("%s does not start the contract", contractCopy)
	}
	shared, err := os.ReadFile(sharedContract)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no shared specification at %s (a clone on its own): the copy cannot be compared", sharedContract)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(copied, shared) {
		t.Fatalf("%s differs from %s: copy it again (cp %s %s)", contractCopy, sharedContract, sharedContract, contractCopy)
	}
}
