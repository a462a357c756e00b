package conformance

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/explore"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// The requests explored from HTTP's grammar (package suites/explore): one
// spec a family, each sending the variants the seed (--explore-seed) and
// the profile pick. They state nothing: the contract oracle judges every
// answer by its request's class, so a spec fails with whatever rule an
// answer breaks.

// exploreLabel is the feature label of the explored requests.
const exploreLabel = "explore"

// Quick spends a fixed share of its budget on exploration: every request
// without a valid key (a round trip each) and a few on each key's window;
// thorough sends every variant.
var quickExplore = explore.Budget{Pro: 6, Free: 6, None: 90}

type explorer struct {
	s    *suite
	once sync.Once
	pick map[explore.Family][]explore.Variant
	left int
}

func (s *suite) exploreSpecs() {
	ex := &explorer{s: s}
	for _, f := range explore.Families {
		It("answers "+string(f)+" variants by the contract's rules", Label(exploreLabel), func(ctx SpecContext) {
			ex.run(ctx, f)
		})
	}
}

// sample is what this run explores, by family.
func (ex *explorer) sample() map[explore.Family][]explore.Variant {
	ex.once.Do(func() {
		b := quickExplore
		if p, _ := probe.ParseProfile(ex.s.cfg.Profile); p == probe.Thorough {
			b = explore.Budget{}
		}
		picked := explore.Sample(ex.s.cfg.ExploreSeed, b)
		ex.pick = map[explore.Family][]explore.Variant{}
		for _, v := range picked {
			ex.pick[v.Family] = append(ex.pick[v.Family], v)
		}
		ex.left = len(explore.All()) - len(picked)
	})
	return ex.pick
}

func (ex *explorer) run(ctx context.Context, f explore.Family) {
	s := ex.s
	keys := explore.Keys{Pro: s.tg.Pro, Free: s.tg.Free}
	if ids := s.knownVideoIDs(ctx, 1); len(ids) > 0 {
		keys.Video = ids[0]
	}
	vs := ex.sample()[f]
	sent, unmade, gaveUp := 0, 0, 0
	for _, v := range vs {
		req, ok := v.Request(keys)
		if !ok {
			unmade++
			continue
		}
		for page := 0; page < max(v.Pages, 1); page++ {
			resp, err := s.c.Do(ctx, req)
			sent++
			if err != nil {
				// no answer to judge (the target closed the connection on
				// a request HTTP allows, say): nothing the contract rules
				gaveUp++
				fmt.Fprintf(GinkgoWriter, "%s: no answer: %v\n", v.Name, err)
				break
			}
			if v.Pages == 0 {
				break
			}
			doc, _ := resp.JSON()
			next, ok := jsondoc.String(doc, "/nextCursor")
			if resp.Status != 200 || !ok || next == "" {
				break
			}
			q, _ := url.ParseQuery(req.Query)
			q.Set("cursor", next)
			req.Query = q.Encode()
		}
	}
	AddReportEntry("explored", fmt.Sprintf("--explore-seed %d: %d variant(s) of %s, %d request(s), %d not made (a key or a video not known), %d without an answer", s.cfg.ExploreSeed, len(vs), f, sent, unmade, gaveUp), ReportEntryVisibilityNever)
	if len(vs) == 0 {
		Skip(fmt.Sprintf("no %s variant picked under --profile %s (--profile thorough sends every one)", f, s.profile()))
	}
}

// profile is the run's profile, by name.
func (s *suite) profile() probe.Profile {
	p, _ := probe.ParseProfile(s.cfg.Profile)
	return p
}
