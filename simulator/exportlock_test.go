package simulator

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// stalledWriter is a reader of an export that takes nothing until let go.
type stalledWriter struct {
	header  http.Header
	body    bytes.Buffer
	writing chan struct{} // closed at the first write
	release chan struct{}
}

func (w *stalledWriter) Header() http.Header { return w.header }
func (w *stalledWriter) WriteHeader(int)     {}
func (w *stalledWriter) Write(b []byte) (int, error) {
	if w.writing != nil {
		close(w.writing)
		w.writing = nil
		<-w.release
	}
	return w.body.Write(b)
}

// An export to a reader that stalls holds no lock: the API answers, the
// clock advances (the world records events), the control API changes
// accounts, all while the export waits; and the export shows the world of
// the moment it began, byte for byte, not what happened while it streamed.
func TestAStalledExportBlocksNothing(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	events := s.st.Load().world.Stats().Events
	var before bytes.Buffer
	if err := s.Export(&before); err != nil {
		t.Fatal(err)
	}
	w := &stalledWriter{header: http.Header{}, writing: make(chan struct{}), release: make(chan struct{})}
	writing, exported := w.writing, make(chan struct{})
	go func() {
		defer close(exported)
		s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/_control/world", nil))
	}()
	<-writing
	done := make(chan []int, 1)
	go func() {
		pro := s.Seeded().Pro
		done <- []int{
			s.serve(t, feedReq(pro, "limit=5")).status,
			s.serve(t, req{method: http.MethodPost, target: "/_control/clock/advance", body: `{"duration":"6h"}`}).status,
			s.serve(t, feedReq(pro, "limit=5")).status,
			s.serve(t, req{method: http.MethodPost, target: "/_control/accounts", body: `{"plan":"pro"}`}).status,
		}
	}()
	select {
	case got := <-done:
		if got[0] != 200 || got[1] != 200 || got[2] != 200 || got[3] != 201 {
			t.Errorf("while an export stalled: feed %d, advance %d, feed %d, new account %d", got[0], got[1], got[2], got[3])
		}
	case <-time.After(10 * time.Second):
		t.Error("the API and the control API wait for a stalled export")
	}
	close(w.release)
	<-exported
	if n := s.st.Load().world.Stats().Events; n <= events {
		t.Errorf("the advance recorded no event (%d, %d before)", n, events)
	}
	if !bytes.Equal(w.body.Bytes(), before.Bytes()) {
		t.Errorf("the export is not the world of its moment: %d bytes, %d before the changes", w.body.Len(), before.Len())
	}
}
