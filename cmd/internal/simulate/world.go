package simulate

import (
	"bufio"
	"bytes"
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

// maxStreamDepth is the deepest nesting a --world stream may have: the
// import's (PUT /_control/world decodes with encoding/json, which refuses
// deeper than 10,000 levels), checked as the bytes come.
const maxStreamDepth = 10000

// readJSONStream reads one JSON object from r, at most limit bytes, and
// what follows it up to the end of r, which must be blanks. The bytes are
// checked one at a time as they come (strings, nesting, the export's first
// member), in time and memory linear in what was read: a stream that is no
// JSON object, one that does not begin as an export does, one nested
// deeper than the import allows, ends at its first wrong byte, whatever
// limit is. The import checks the rest of the syntax.
func readJSONStream(r io.Reader, limit int64) ([]byte, error) {
	s := &jsonStream{lr: &io.LimitedReader{R: r, N: limit + 1}}
	s.br = bufio.NewReader(s.lr)
	tooLarge := fmt.Errorf("more than %d bytes, more than --max-import-bytes allows", limit)
	notObject := func(format string, args ...any) error {
		return fmt.Errorf("not a JSON object (an export, or a recording): "+format, args...)
	}
	c, err := s.blanks()
	switch {
	case err == io.EOF && s.lr.N <= 0:
		return nil, tooLarge
	case err == io.EOF:
		return s.buf.Bytes(), nil // empty: said by the caller
	case err != nil:
		return nil, notObject("%w", err)
	case c != '{':
		return nil, notObject("it begins with %q", c)
	}
	// As the import wants it: "format" first, and the export's. A JSON
	// object of anything else ends here, not at the bound.
	wantFormat := fmt.Errorf("not an export nor a recording: the first member must be \"format\": %q", simulator.ExportFormat)
	if name, err := s.str(); err != nil || name != "format" {
		return nil, s.either(err, tooLarge, wantFormat)
	}
	if c, err := s.blanks(); err != nil || c != ':' {
		return nil, s.either(err, tooLarge, wantFormat)
	}
	if format, err := s.str(); err != nil || format != simulator.ExportFormat {
		return nil, s.either(err, tooLarge, fmt.Errorf("not an export nor a recording: \"format\" must be %q", simulator.ExportFormat))
	}
	for depth := 1; depth > 0; {
		c, err := s.next()
		if err != nil {
			return nil, s.either(err, tooLarge, notObject("%w", io.ErrUnexpectedEOF))
		}
		switch c {
		case '"':
			if err := s.rest(); err != nil {
				return nil, s.either(err, tooLarge, notObject("%w", io.ErrUnexpectedEOF))
			}
		case '{', '[':
			if depth++; depth > maxStreamDepth {
				return nil, notObject("nested deeper than %d levels, as the import refuses", maxStreamDepth)
			}
		case '}', ']':
			depth--
		}
	}
	// After the object, blanks only, to the end.
	if _, err := s.blanks(); err != io.EOF {
		return nil, s.either(err, tooLarge, errors.New("data after the end of the JSON object"))
	}
	if s.lr.N <= 0 {
		return nil, tooLarge
	}
	return s.buf.Bytes(), nil
}

// jsonStream reads a stream a byte at a time, keeping what it read.
type jsonStream struct {
	lr  *io.LimitedReader
	br  *bufio.Reader
	buf bytes.Buffer
}

func (s *jsonStream) next() (byte, error) {
	c, err := s.br.ReadByte()
	if err == nil {
		s.buf.WriteByte(c)
	}
	return c, err
}

// blanks reads past JSON's blanks and returns the byte after them.
func (s *jsonStream) blanks() (byte, error) {
	for {
		c, err := s.next()
		if err != nil || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, err
		}
	}
}

// str reads a string after blanks: its bytes as written (escapes kept),
// at most 256 of them are kept for the caller (the format's name).
func (s *jsonStream) str() (string, error) {
	c, err := s.blanks()
	if err != nil {
		return "", err
	}
	if c != '"' {
		return "", fmt.Errorf("want a string, not %q", c)
	}
	start := s.buf.Len()
	if err := s.rest(); err != nil {
		return "", err
	}
	b := s.buf.Bytes()[start : s.buf.Len()-1]
	return string(b[:min(len(b), 256)]), nil
}

// rest reads the rest of a string whose opening quote was read.
func (s *jsonStream) rest() error {
	for {
		c, err := s.next()
		switch {
		case err != nil:
			return err
		case c == '\\':
			if _, err := s.next(); err != nil {
				return err
			}
		case c == '"':
			return nil
		}
	}
}

// either is tooLarge when the read stopped at the bound, else wrong.
func (s *jsonStream) either(err, tooLarge, wrong error) error {
	if s.lr.N <= 0 {
		return tooLarge
	}
	return wrong
}
