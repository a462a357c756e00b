package client

import (
	"encoding/json"
	"io"
	"os"
	"sync"
)

// store is where a client keeps what it read: bodies in memory up to a
// budget and in temporary files beyond it, and decoded documents up to a
// budget of estimated bytes, the least recently used dropped first (they
// are decoded again when asked for).
type store struct {
	keep, budget int64
	decode       int64 // the largest body decoded

	mu       sync.Mutex
	inMemory int64
	dir      string
	closed   bool
	tick     int64
	docs     []*reading // documents kept
	decoded  int64      // their estimated bytes
}

// spill is a body on disk.
type spill struct {
	path string
	size int
}

func (sp *spill) read(n int) ([]byte, error) {
	f, err := os.Open(sp.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if n < 0 || n > sp.size {
		n = sp.size
	}
	b := make([]byte, n)
	_, err = io.ReadFull(f, b)
	return b, err
}

// put gives resp its body: in memory while the budget lasts, else on disk.
func (s *store) put(resp *Response, raw []byte) {
	s.mu.Lock()
	if s.inMemory+int64(len(raw)) <= s.keep || len(raw) == 0 || s.closed {
		s.inMemory += int64(len(raw))
		s.mu.Unlock()
		resp.Body = raw
		return
	}
	dir, err := s.dirLocked()
	s.mu.Unlock()
	if err == nil {
		var f *os.File
		if f, err = os.CreateTemp(dir, "body-*"); err == nil {
			_, err = f.Write(raw)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				resp.spilled = &spill{path: f.Name(), size: len(raw)}
				return
			}
			os.Remove(f.Name())
		}
	}
	resp.Body = raw // no disk: keep it in memory after all
}

func (s *store) dirLocked() (string, error) {
	if s.dir == "" {
		d, err := os.MkdirTemp("", "tcmkit-bodies-")
		if err != nil {
			return "", err
		}
		s.dir = d
	}
	return s.dir, nil
}

func (s *store) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.dir == "" {
		return nil
	}
	err := os.RemoveAll(s.dir)
	s.dir = ""
	return err
}

// touch marks a document as used now.
func (s *store) touch(rd *reading) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.tick++
	rd.used = s.tick
	s.mu.Unlock()
}

// keepDoc counts a freshly decoded document and drops the least recently
// used others while the budget is exceeded.
func (s *store) keepDoc(rd *reading) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.tick++
	rd.used = s.tick
	s.docs = append(s.docs, rd)
	s.decoded += rd.cost
	var drop []*reading
	for s.decoded > s.budget && len(s.docs) > 1 {
		oldest := 0
		for i, d := range s.docs {
			if d.used < s.docs[oldest].used {
				oldest = i
			}
		}
		if s.docs[oldest] == rd {
			break
		}
		drop = append(drop, s.docs[oldest])
		s.decoded -= s.docs[oldest].cost
		s.docs = append(s.docs[:oldest], s.docs[oldest+1:]...)
	}
	s.mu.Unlock()
	for _, d := range drop {
		d.mu.Lock()
		if d.err == nil { // an error is small, and final
			d.doc, d.decoded = nil, false
		}
		d.mu.Unlock()
	}
}

// estimate is roughly how many bytes a decoded document takes.
func estimate(doc any) int64 {
	var n int64
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			n += 200 + 64*int64(len(t))
			for k, x := range t {
				n += int64(len(k))
				walk(x)
			}
		case []any:
			n += 24 + 16*int64(len(t))
			for _, x := range t {
				walk(x)
			}
		case string:
			n += 32 + int64(len(t))
		case json.Number:
			n += 32 + int64(len(t))
		default:
			n += 16
		}
	}
	walk(doc)
	return n
}

// decodeLimit is the largest body decoded (DefaultMaxDecode for a response
// made by hand).
func (s *store) decodeLimit() int64 {
	if s == nil || s.decode <= 0 {
		return DefaultMaxDecode
	}
	return s.decode
}
