package simulate

import (
	"fmt"
	"io"
	"os"
)

// readWorld reads a world to serve (--world), at most limit bytes, the
// bound of PUT /_control/world.
func readWorld(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--world: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("--world: %w", err)
	case int64(len(b)) > limit:
		return nil, fmt.Errorf("--world %s: larger than %d bytes (--max-import-bytes)", path, limit)
	}
	return b, nil
}
