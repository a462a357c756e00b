package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
)

// A cursor is remembered as the first key's it was handed to: a page a
// cache hands another key later does not make it that key's.
func TestHandedToRemembersTheFirstKey(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"events":[],"nextCursor":"c1"}`))
	}))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL}
	defer c.Close()
	ctx := context.Background()
	for _, key := range []string{"first", "second"} {
		if _, err := c.Send(ctx, client.Get(schemas.PathFeed, nil, client.Bearer(key))); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.HandedTo("c1"); got != client.Bearer("first") {
		t.Errorf("HandedTo(c1) is not the first key's")
	}
	if got := c.HandedTo("c2"); got != "" {
		t.Errorf("HandedTo(c2), never handed out, is not empty")
	}
}
