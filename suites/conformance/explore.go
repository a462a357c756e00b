package conformance

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/explore"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// The requests explored from HTTP's grammar (package suites/explore): one
// spec a family, each judging the variants the seed (--explore-seed) and
// the profile pick. They state nothing: the contract oracle judges every
// answer by its request's class, so a spec fails with whatever rule an
// answer breaks. The variants are sent in lanes, one for each key's window
// and one for the requests without a valid key, as the probes' are.

// exploreLabel is the feature label of the explored requests.
const exploreLabel = "explore"

// Quick spends a fixed share of its budget on exploration: a round trip
// for most requests without a valid key and a few on each key's window;
// thorough sends every variant.
var quickExplore = explore.Budget{Pro: 6, Free: 6, None: 90}

type explorer struct {
	s    *suite
	once sync.Once
	mu   sync.Mutex
	pick map[explore.Family][]explore.Variant
	left map[explore.Family]int
	done map[explore.Family]chan struct{}
	said map[explore.Family][]string // what each family's requests met
}

func (s *suite) exploreSpecs() {
	ex := &explorer{s: s}
	for _, f := range explore.Families {
		It("answers "+string(f)+" variants by the contract's rules", Label(exploreLabel), func(ctx SpecContext) {
			ex.judge(ctx, f)
		})
	}
}

func exploreScope(f explore.Family) string { return "explored requests: " + string(f) }

// start picks the variants and sends them in lanes, once.
func (ex *explorer) start() {
	ex.once.Do(func() {
		s := ex.s
		b := quickExplore
		if s.profile() == probe.Thorough {
			b = explore.Budget{}
		}
		ex.pick, ex.left, ex.done, ex.said = map[explore.Family][]explore.Variant{}, map[explore.Family]int{}, map[explore.Family]chan struct{}{}, map[explore.Family][]string{}
		for _, f := range explore.Families {
			ex.done[f] = make(chan struct{})
		}
		bySpend := map[explore.Spend][]explore.Variant{}
		for _, v := range explore.Sample(s.cfg.ExploreSeed, b) {
			ex.pick[v.Family] = append(ex.pick[v.Family], v)
			ex.left[v.Family]++
			bySpend[v.Spend] = append(bySpend[v.Spend], v)
		}
		for _, f := range explore.Families {
			if ex.left[f] == 0 {
				close(ex.done[f])
			}
		}
		keys := explore.Keys{Pro: s.tg.Pro, Free: s.tg.Free}
		if ids := s.knownVideoIDs(s.runCtx, 1); len(ids) > 0 {
			keys.Video = ids[0]
		}
		for _, spend := range []explore.Spend{explore.SpendPro, explore.SpendFree, explore.SpendNone} {
			vs := bySpend[spend]
			if len(vs) == 0 {
				continue
			}
			key := map[explore.Spend]string{explore.SpendPro: s.tg.Pro, explore.SpendFree: s.tg.Free}[spend]
			s.pace.lane(s.runCtx, "explored requests on "+string(spend), func(ctx context.Context) {
				for _, v := range vs {
					ex.send(client.WithScope(ctx, exploreScope(v.Family)), key, keys, v)
					ex.mu.Lock()
					if ex.left[v.Family]--; ex.left[v.Family] == 0 {
						close(ex.done[v.Family])
					}
					ex.mu.Unlock()
				}
			})
		}
	})
}

// send sends one variant (a walk: its pages), holding its key's window.
func (ex *explorer) send(ctx context.Context, key string, keys explore.Keys, v explore.Variant) {
	s := ex.s
	note := func(format string, args ...any) {
		ex.mu.Lock()
		ex.said[v.Family] = append(ex.said[v.Family], fmt.Sprintf(format, args...))
		ex.mu.Unlock()
	}
	req, ok := v.Request(keys)
	if !ok {
		note("%s: not sent (a key or a video it needs is not known)", v.Name)
		return
	}
	if key != "" {
		release, err := s.pace.hold(ctx, key)
		if err != nil {
			note("%s: not sent: %v", v.Name, err)
			return
		}
		defer release()
	}
	for page := 0; page < max(v.Pages, 1); page++ {
		if key != "" {
			if d := s.roomIn(key, req.Path, 1); d > 0 {
				if err := s.wait(ctx, d, "so that the key has room in its window"); err != nil {
					return
				}
			}
		}
		resp, err := s.c.Do(ctx, req)
		if err != nil {
			// no answer to judge (a target that closes the connection on
			// a request HTTP allows): nothing the contract rules
			note("%s: no answer: %v", v.Name, err)
			return
		}
		doc, _ := resp.JSON()
		next, ok := jsondoc.String(doc, "/nextCursor")
		if v.Pages == 0 || resp.Status != 200 || !ok || next == "" {
			return
		}
		q, _ := url.ParseQuery(req.Query)
		q.Set("cursor", next)
		req.Query = q.Encode()
	}
}

// judge waits for a family's variants and takes their exchanges: the
// oracle's problems in them fail the spec at its end.
func (ex *explorer) judge(ctx context.Context, f explore.Family) {
	ex.start()
	select {
	case <-ex.done[f]:
	case <-ctx.Done():
		ex.s.Block("the run ended before the explored requests were sent")
	}
	ex.s.c.Claim(exploreScope(f))
	ex.mu.Lock()
	said := ex.said[f]
	n := len(ex.pick[f])
	ex.mu.Unlock()
	for _, line := range said {
		fmt.Fprintln(GinkgoWriter, ex.s.Redactor().String(line))
	}
	AddReportEntry("explored", fmt.Sprintf("--explore-seed %d: %d %s variant(s) under --profile %s", ex.s.cfg.ExploreSeed, n, f, ex.s.profile()), ReportEntryVisibilityNever)
	if n == 0 {
		skipFor("--profile thorough", fmt.Sprintf("no %s variant picked under --profile %s (--profile thorough sends every one)", f, ex.s.profile()))
	}
}

// profile is the run's profile, by name.
func (s *suite) profile() probe.Profile {
	p, _ := probe.ParseProfile(s.cfg.Profile)
	return p
}
