package simulator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/tcmkit/tcmkit/simulator/world"
)

// The control routes that move the world as a whole: the clock, polls,
// reset, export and import.

func (s *Server) ctlClock(r *http.Request) answer {
	mode := "realtime"
	if s.clock.Manual() {
		mode = "manual"
	}
	return jsonAnswer(http.StatusOK, map[string]any{"now": ms(s.clock.Now()), "mode": mode, "speed": s.clock.Speed(), "full": s.st.Load().full.Load()})
}

func (s *Server) ctlAdvance(r *http.Request) answer {
	var b struct {
		Duration string `json:"duration"`
	}
	if a, ok := readControl(r, &b); !ok {
		return a
	}
	d, err := time.ParseDuration(b.Duration)
	if err != nil || d < 0 || d > MaxAdvance {
		return errorAnswer(http.StatusBadRequest, CodeInvalidBody, fmt.Sprintf(`duration must be a Go duration from 0 to %s, such as "90s" or "15m"`, MaxAdvance), map[string]any{"duration": excerpt(b.Duration)})
	}
	if err := s.advanceLimit(d); err != nil {
		return errorAnswer(http.StatusBadRequest, CodeInvalidBody, err.Error(), map[string]any{"duration": excerpt(b.Duration)})
	}
	// The polls run on behalf of this request: a client that gives up, or
	// a shutdown, stops them between two steps, the clock where they got.
	n, err := s.advance(r.Context(), d)
	s.log.Info("clock advanced", "by", d, "now", s.clock.Now(), "events", n, "err", err)
	if err != nil {
		return errorAnswer(http.StatusServiceUnavailable, CodeBusy, "the advance stopped part-way ("+err.Error()+"); the clock is at the time it says", map[string]any{"now": ms(s.clock.Now())})
	}
	return jsonAnswer(http.StatusOK, map[string]any{"now": ms(s.clock.Now()), "events": n, "full": s.st.Load().full.Load()})
}

func (s *Server) ctlPoll(r *http.Request) answer {
	st := s.st.Load()
	if st.full.Load() {
		return worldFull()
	}
	s.catchUp(s.clock.Now())
	n := st.world.PollAll()
	st.changed()
	s.checkFull(st)
	return jsonAnswer(http.StatusOK, map[string]int{"events": n})
}

func worldFull() answer {
	return errorAnswer(http.StatusConflict, CodeWorldFull, "the world holds as many events as it may (--max-events) and no longer polls; reset it or import a smaller one", nil)
}

// Reset puts the server back to its state at New: the same world, the
// same seeded keys, the clock at the start, no faults, fresh budgets, an
// empty journal. It waits for a clock advance in progress.
func (s *Server) Reset() error {
	if len(s.cfg.World) > 0 {
		return s.resetToWorld()
	}
	s.advancing.Lock()
	defer s.advancing.Unlock()
	s.control.Lock()
	defer s.control.Unlock()
	st, err := s.freshState()
	if err != nil {
		return err
	}
	s.clock.Set(s.cfg.Start)
	s.st.Store(st)
	s.checkFull(st)
	s.faults.Clear()
	s.journal.Clear()
	s.resetJudge()
	return nil
}

func (s *Server) ctlReset(r *http.Request) answer {
	if err := s.Reset(); err != nil {
		return s.internalError(r, err)
	}
	s.log.Info("reset")
	return jsonAnswer(http.StatusOK, map[string]int64{"now": ms(s.clock.Now())})
}

// exportFormat names the export's layout; an import of another is refused.
const exportFormat = "tcmkit-simulator/1"

// export is the head of the JSON of GET/PUT /_control/world; the world
// follows it as the last member. Keys are kept as hashes only; the seeded
// keys are there whole, as /_control/info shows them.
type export struct {
	Format     string `json:"format"`
	Now        int64  `json:"now"`
	KeyCounter uint64 `json:"keyCounter"`
	// KeySeed is the seed the keys come from (the keyring's), absent for
	// fresh keys (a served recording's): see checkImport.
	KeySeed *int64        `json:"keySeed,omitempty"`
	Seeded  Keys          `json:"seeded"`
	Keys    []exportedKey `json:"keys"`
	// Recording says where a recorded world came from (tcmkit record).
	Recording *Recording `json:"recording,omitempty"`
}

// Export writes the world, its accounts and the key hashes as JSON.
func (s *Server) Export(w io.Writer) error { return s.exportSized(w, nil) }

// exportSized is Export with the document's exact size told to sized
// before a byte is written (see world.ExportSized): sized may refuse, and
// then nothing is written. Memory stays bounded: the world is written a
// piece at a time, from a copy of one moment (exportMoment), with no lock
// the API or the control API waits for; one export at a time, so one copy.
func (s *Server) exportSized(w io.Writer, sized func(n int64) error) error {
	s.exporting.Lock()
	defer s.exporting.Unlock()
	head, wd, err := s.exportMoment()
	if err != nil {
		return err
	}
	// The world's JSON is spliced in as it is, written after the head once
	// the size is known, without its closing newline: encoding it again as
	// a RawMessage would rewrite its escapes, so an import would not give
	// back the same bytes.
	head = append(bytes.TrimSuffix(head, []byte("}")), `,"world":`...)
	out := &spliced{w: w, head: head}
	var worldSized func(int64) error
	if sized != nil {
		worldSized = func(n int64) error { return sized(int64(len(head)) + n - 1 + int64(len("}\n"))) }
	}
	if err := wd.WriteSized(out, worldSized); err != nil {
		return fmt.Errorf("simulator: export world: %w", err)
	}
	if _, err := io.WriteString(w, "}\n"); err != nil {
		return fmt.Errorf("simulator: export: %w", err)
	}
	return nil
}

// exportMoment is the export's head and a copy of its world, taken at one
// moment: under the control lock, so that no reset, import or key change
// comes between the keys and the world.
func (s *Server) exportMoment() ([]byte, world.ExportCopy, error) {
	s.control.Lock()
	defer s.control.Unlock()
	st := s.st.Load()
	counter, seed, keys := st.keys.export()
	head, err := json.Marshal(export{Format: exportFormat, Now: ms(s.clock.Now()), KeyCounter: counter, KeySeed: seed, Seeded: st.seeded, Keys: keys, Recording: st.recording})
	if err != nil {
		return nil, world.ExportCopy{}, fmt.Errorf("simulator: export: %w", err)
	}
	return head, st.world.ExportCopy(), nil
}

// spliced writes head before the first bytes written to it, and holds
// back a final newline (the world's, which the export does not end with).
type spliced struct {
	w       io.Writer
	head    []byte
	newline bool // a newline held back
}

func (p *spliced) Write(b []byte) (int, error) {
	if p.head != nil {
		if _, err := p.w.Write(p.head); err != nil {
			return 0, err
		}
		p.head = nil
	}
	if p.newline {
		if _, err := p.w.Write([]byte{'\n'}); err != nil {
			return 0, err
		}
		p.newline = false
	}
	n := len(b)
	if n > 0 && b[n-1] == '\n' {
		b, p.newline = b[:n-1], true
	}
	if _, err := p.w.Write(b); err != nil {
		return 0, err
	}
	return n, nil
}

// errImportBusy is Import's answer while another import runs.
var errImportBusy = errors.New("simulator: import: another import is in progress")

// Import replaces the world, accounts and keys with an export, and sets
// the clock to the export's time. Rate-limit budgets start fresh. It reads
// r as a stream: the head first (format first, so a wrong document is
// refused at once), then the world, which must be the last member, as
// Export writes it. One import runs at a time (errImportBusy). An export
// keeps its keys; a recording's accounts get fresh ones, which no other
// world hands out (checkImport says all an import is checked for).
func (s *Server) Import(r io.Reader) error { return s.importWith(r, nil) }

// importWith is Import, with the salt of a recording's fresh keys (nil: a
// new one).
func (s *Server) importWith(r io.Reader, salt *[32]byte) error {
	if !s.importing.TryLock() {
		return errImportBusy
	}
	defer s.importing.Unlock()
	var e export
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("simulator: import: want a JSON object (an export of GET %sworld)", ControlPrefix)
	}
	var wd *world.World
	var rest io.Reader // what follows the world
	for wd == nil {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("simulator: import: %w", err)
		}
		name, _ := t.(string)
		if name != "format" && e.Format != exportFormat {
			return fmt.Errorf("simulator: import: the first member must be \"format\": %q", exportFormat)
		}
		switch name {
		case "format":
			err = dec.Decode(&e.Format)
			if err == nil && e.Format != exportFormat {
				err = fmt.Errorf("format %q, want %q", excerpt(e.Format), exportFormat)
			}
		case "now":
			err = dec.Decode(&e.Now)
		case "keyCounter":
			err = dec.Decode(&e.KeyCounter)
		case "keySeed":
			err = dec.Decode(&e.KeySeed)
		case "seeded":
			err = dec.Decode(&e.Seeded)
		case "keys":
			err = dec.Decode(&e.Keys)
		case "recording":
			err = dec.Decode(&e.Recording)
		case "world":
			wd, rest, err = importWorld(io.MultiReader(dec.Buffered(), r))
		default:
			err = fmt.Errorf("unknown member %q (the world must come last)", excerpt(name))
		}
		if err != nil {
			return fmt.Errorf("simulator: import: %w", err)
		}
	}
	if err := importLimits(e.Now, rest); err != nil {
		return fmt.Errorf("simulator: import: %w", err)
	}
	if err := importClock(e.Now, wd.Now().UnixMilli()); err != nil {
		return fmt.Errorf("simulator: import: %w", err)
	}
	keys, err := s.checkImport(&e, wd, salt)
	if err != nil {
		return fmt.Errorf("simulator: import: %w", err)
	}
	st := s.newState(wd, keys)
	st.seeded = e.Seeded
	st.recording = e.Recording
	if s.cfg.Frozen {
		wd.Freeze()
	}
	s.advancing.Lock()
	defer s.advancing.Unlock()
	s.control.Lock()
	defer s.control.Unlock()
	s.clock.Set(time.UnixMilli(e.Now).UTC())
	s.st.Store(st)
	s.checkFull(st)
	s.resetJudge() // other keys, other cursors: the verdicts start again
	return nil
}

// importWorld reads the world from what follows its member name: the
// decoder that read the name has not read the colon yet.
func importWorld(r io.Reader) (*world.World, io.Reader, error) {
	br := bufio.NewReader(r)
	for {
		c, err := br.ReadByte()
		if err != nil {
			return nil, nil, err
		}
		if c == ':' {
			return world.ImportPrefix(br)
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return nil, nil, errors.New(`want ':' after "world"`)
		}
	}
}

// ctlExport streams the export: its size is known before it is written
// (Content-Length), and an export larger than an import takes
// (MaxImportBytes) is refused with a 409 that says so, since what the
// simulator exports it must be able to import. A reader slower than
// exportRate past a minute is cut off: it holds a copy of the world (not
// of its events) meanwhile, and the next export waits for it.
func (s *Server) ctlExport(r *http.Request) answer {
	return answer{stream: func(w http.ResponseWriter) {
		var refused *answer
		started := false
		err := s.exportSized(w, func(n int64) error {
			if n > s.cfg.MaxImportBytes {
				a := errorAnswer(http.StatusConflict, CodeTooLarge, fmt.Sprintf(
					"this world's export is %d bytes, more than an import takes (%d, --max-import-bytes): start the simulator with --max-import-bytes %d or more (at most %d) to export it, or reset it",
					n, s.cfg.MaxImportBytes, n, int64(MaxImportBytesBound)), map[string]int64{"bytes": n, "maxImportBytes": s.cfg.MaxImportBytes})
				refused = &a
				return errExportTooLarge
			}
			h := w.Header()
			h.Set("Content-Type", contentTypeJSON)
			h.Set("Content-Length", strconv.FormatInt(n, 10))
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute + time.Duration(n/exportRate)*time.Second))
			w.WriteHeader(http.StatusOK)
			started = true
			return nil
		})
		switch {
		case refused != nil:
			writeAnswer(w, *refused)
		case err != nil && !started:
			writeAnswer(w, s.internalError(r, err))
		case err != nil:
			s.log.Warn("export cut off", "err", err) // the reader went away or was too slow
		}
	}}
}

// exportRate is the slowest a reader of an export may read past its
// first minute, in bytes a second.
const exportRate = 1 << 20

var errExportTooLarge = errors.New("the export is larger than an import takes")

// ctlImport reads an import for as long as one of MaxImportBytes takes to
// read and check (a minute, and a second for each 256 KB of the bound,
// beyond the server's ReadTimeout and WriteTimeout), so that what the
// simulator exports it can import.
func (s *Server) ctlImport(r *http.Request) answer {
	return answer{stream: func(w http.ResponseWriter) {
		rc, d := http.NewResponseController(w), time.Minute+time.Duration(s.cfg.MaxImportBytes>>18)*time.Second
		_ = rc.SetReadDeadline(time.Now().Add(d))
		_ = rc.SetWriteDeadline(time.Now().Add(d + time.Minute)) // the answer comes once it is read
		writeAnswer(w, s.importAnswer(r))
	}}
}

func (s *Server) importAnswer(r *http.Request) answer {
	limit := s.cfg.MaxImportBytes
	tooLarge := "an import is at most " + strconv.FormatInt(limit, 10) + " bytes (--max-import-bytes)"
	if r.ContentLength > limit {
		return errorAnswer(http.StatusRequestEntityTooLarge, CodeTooLarge, tooLarge, nil)
	}
	body := &countingReader{r: r.Body} // at most limit: the route is large
	err := s.Import(body)
	if body.n > 8<<20 && err != nil {
		// What a big refused import took is garbage: give it back to the
		// system now rather than after the scavenger's minutes.
		debug.FreeOSMemory()
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return errorAnswer(http.StatusRequestEntityTooLarge, CodeTooLarge, tooLarge, nil)
	case errors.Is(err, errImportBusy):
		return errorAnswer(http.StatusConflict, CodeBusy, err.Error(), nil)
	case err != nil:
		return errorAnswer(http.StatusBadRequest, CodeInvalidBody, err.Error(), nil)
	}
	s.log.Info("world imported", "bytes", body.n)
	return jsonAnswer(http.StatusOK, Imported{Now: ms(s.clock.Now()), Keys: s.ValidKeys(), Whole: ControlPrefix + "info"})
}

// Imported is the answer to PUT /_control/world: the clock, and the keys
// now valid, each with its role and hint (never whole: the seeded ones
// are whole in GET /_control/info).
type Imported struct {
	Now   int64     `json:"now"`
	Keys  []KeyRole `json:"keys"`
	Whole string    `json:"wholeKeys"`
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
