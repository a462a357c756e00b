package conformance

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a number of bytes, written as people write sizes: 4MiB,
// 512KiB, 1GiB, or a plain number of bytes. It is a flag.Value.
type ByteSize int64

var byteUnits = []struct {
	suffix string
	n      int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}

// Set reads a size.
func (b *ByteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.n
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 1 || n*float64(mult) > 1<<62 {
		return fmt.Errorf("size %q: want a positive number of bytes, such as 4MiB, 512KiB or 1048576", s)
	}
	*b = ByteSize(n * float64(mult))
	return nil
}

// String writes the size exactly, in the largest binary unit that divides it.
func (b *ByteSize) String() string {
	if b == nil {
		return ""
	}
	for _, u := range byteUnits[:3] {
		if int64(*b) >= u.n && int64(*b)%u.n == 0 {
			return strconv.FormatInt(int64(*b)/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(*b), 10)
}
