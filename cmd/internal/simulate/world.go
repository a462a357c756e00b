package simulate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/tcmkit/tcmkit/simulator"
)

// readWorld reads a world to serve (--world) as PUT /_control/world reads
// an import: at most limit bytes (--max-import-bytes), and one JSON object.
// It is bounded before it is read: a regular file larger than limit is
// refused by its size, unread; anything else (a FIFO, /dev/stdin, a
// device) is read as a stream whose JSON is checked as it comes, so that
// bytes that begin no object (/dev/zero, /dev/urandom) or follow its end
// stop the read at once, and it never reads more than limit. An empty
// file, or one of blanks, is refused as the import refuses it, not served
// as the seeded world.
func readWorld(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--world: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("--world: %w", err)
	}
	tooLarge := func(n string) error {
		return fmt.Errorf("--world %s: %s bytes, more than --max-import-bytes (%d) allows", path, n, limit)
	}
	var b []byte
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("--world %s is a directory: want a file (an export of GET /_control/world, or a recording of tcmkit record)", path)
	case fi.Mode().IsRegular():
		if fi.Size() > limit {
			return nil, tooLarge(strconv.FormatInt(fi.Size(), 10))
		}
		var buf bytes.Buffer
		buf.Grow(int(fi.Size()) + 1) // one read's worth more: a file that grew meanwhile
		if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
			return nil, fmt.Errorf("--world: %w", err)
		}
		b = buf.Bytes()
	default:
		b, err = readJSONStream(f, limit)
		if err != nil {
			return nil, fmt.Errorf("--world %s: %w", path, err)
		}
	}
	if int64(len(b)) > limit {
		return nil, tooLarge("more than " + strconv.FormatInt(limit, 10))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		// As PUT /_control/world answers an empty body (400).
		return nil, fmt.Errorf("--world %s is empty: want a JSON object (an export of GET /_control/world, or a recording of tcmkit record)", path)
	}
	return b, nil
}

// readJSONStream reads one JSON object from r, at most limit bytes, and
// what follows it up to the end of r, which must be blanks: the bytes are
// checked by a decoder as they come, so a stream that is no JSON object,
// or one that does not begin as an export does, ends at its first wrong
// byte, whatever limit is.
func readJSONStream(r io.Reader, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	lr := &io.LimitedReader{R: r, N: limit + 1}
	dec := json.NewDecoder(io.TeeReader(lr, &buf))
	tooLarge := func() error { return fmt.Errorf("more than %d bytes, more than --max-import-bytes allows", limit) }
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		switch {
		case err == io.EOF:
			return buf.Bytes(), nil // empty: said by the caller
		case lr.N <= 0:
			return nil, tooLarge()
		case err != nil:
			return nil, fmt.Errorf("not a JSON object (an export, or a recording): %w", err)
		}
		return nil, fmt.Errorf("not a JSON object (an export, or a recording): it begins with %v", t)
	}
	// As the import wants it: "format" first, and the export's. A JSON
	// object of anything else ends here, not at the bound.
	if name, err := dec.Token(); err != nil || name != "format" {
		return nil, fmt.Errorf("not an export nor a recording: the first member must be \"format\": %q", simulator.ExportFormat)
	}
	if format, err := dec.Token(); err != nil || format != simulator.ExportFormat {
		return nil, fmt.Errorf("not an export nor a recording: \"format\" must be %q", simulator.ExportFormat)
	}
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if lr.N <= 0 {
			return nil, tooLarge()
		}
		if err != nil {
			return nil, fmt.Errorf("not a JSON object (an export, or a recording): %w", err)
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	// After the object, blanks only, to the end.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if lr.N <= 0 {
			return nil, tooLarge()
		}
		return nil, errors.New("data after the end of the JSON object")
	}
	return buf.Bytes(), nil
}
