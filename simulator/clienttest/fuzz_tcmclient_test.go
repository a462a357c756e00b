package clienttest_test

import (
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/ci/examples/clients/tcmclient"
	"github.com/tcmkit/tcmkit/simulator/clienttest"
)

// FuzzTCMClient fuzzes the example client: two syncs of the feed ten
// minutes apart, then the tracked videos of what it read. Its saved inputs
// (testdata/fuzz/FuzzTCMClient) are the bugs it found, fixed since: it gave
// up on a 429 with Retry-After: 0 (seed 4), and net/http sent a GET again
// by itself on a reused connection that closed without an answer, the 21st
// request of a minute (d412fd36727b2685); and two bugs of the client
// judge, which may see a quick client's pages out of order: it saw the
// last page of a walk before the page that handed out its cursor, never
// walked it and called the walk abandoned (2bd4a3565de7fffe, about one
// run in 25), and it saw a sync's pages before the last page of the walk
// before it, and called the sync, which stopped at events the client had,
// abandoned (f45377d784db1c3f, about one run in 3).
func FuzzTCMClient(f *testing.F) {
	clienttest.Fuzz(f, tcmclientTest)
}

func tcmclientTest(t *testing.T, sim *clienttest.Sim) {
	c := tcmclient.New(sim.URL, sim.Keys.Pro)
	c.Clock = sim
	feed := &tcmclient.Feed{Client: c, Limit: 20}
	var got []tcmclient.Event
	sync := func() error {
		more, err := feed.Sync(t.Context())
		got = append(got, more...)
		return err
	}
	err := sync()
	if err == nil {
		if err = sim.Sleep(t.Context(), 10*time.Minute); err == nil {
			err = sync()
		}
	}
	if err == nil {
		var ids []string
		seen := map[string]bool{}
		for _, e := range got {
			if e.Video != nil && !seen[e.Video.PlatformVideoID] && len(ids) < 25 {
				seen[e.Video.PlatformVideoID] = true
				ids = append(ids, e.Video.PlatformVideoID)
			}
		}
		if len(ids) > 0 {
			_, err = c.Videos(t.Context(), ids)
		}
	}
	if err != nil {
		if sim.MayFail() {
			return
		}
		t.Fatalf("tcmclient: %v", err)
	}
	if served := len(sim.ServedEventIDs()); feed.Len() != served {
		t.Fatalf("tcmclient holds %d events, the simulator served %d", feed.Len(), served)
	}
}
