// Command static is the ceiling of the load measurement: a minimal Go HTTP
// server that answers the feed and the tracked-videos paths with bytes held
// in memory, the very bytes the simulator served. Comparing the simulator
// with it, on the same machine and core, measures what the simulator's own
// work costs.
//
//	static -capture -url URL -key KEY -dir DIR   # fetch the answers from a simulator
//	static -addr 127.0.0.1:0 -dir DIR            # serve them (the address it got: DIR/addr.txt)
//
// A capture walks the whole feed (limit=50, every cursor), and asks for one
// set of 20 video ids and -sets random sets of 20. It writes answers.json
// (feed answers by query, videos answers by request body) for the server,
// and for wrk: first.txt (the first page's target), deep.txt (every other
// page's target, or -deep of them drawn at random), one.txt (one videos
// request body) and random.txt (the random ones), a line each.
//
// -ceiling says what it answers:
//   - captured (the default): each request the answer the simulator gave it;
//   - typical: one constant answer per case, hot, with no lookup, of the
//     size the simulator's answers have on average: the first page, a deep
//     page (any request with a cursor) of the deep pages' mean size, the
//     first set's answer for the first set, and for any other set an answer
//     of the random sets' mean size (over the first 500 of them). The ratio
//     to it measures the simulator's work per answer, not the bytes;
//   - first: the first page for every feed request and the first set's
//     answer for every videos request, whatever was asked (the ceiling as
//     issue 27 first measured it: the first set names the newest videos,
//     whose answers are a fifth smaller than a random set's).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
)

// answers is what a capture saves and the server serves.
type answers struct {
	Feed   map[string]string `json:"feed"`   // raw query → page
	Videos map[string]string `json:"videos"` // request body → answer
	First  string            `json:"first"`  // the body of the first set
	// TypicalPage and TypicalSet: the deep page (query) and the random set
	// (body) whose answers are nearest the mean size of their case.
	TypicalPage string `json:"typicalPage"`
	TypicalSet  string `json:"typicalSet"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "listen address")
	dir := flag.String("dir", ".", "directory of answers.json")
	capture := flag.Bool("capture", false, "fetch the answers from a simulator instead of serving")
	url := flag.String("url", "", "simulator base URL (with -capture)")
	key := flag.String("key", "", "Pro API key (with -capture)")
	sets := flag.Int("sets", 500, "random sets of 20 ids to capture")
	deep := flag.Int("deep", 0, "deep cursors to keep, drawn from the whole walk (0: every one)")
	keep := flag.Bool("answers", true, "keep the answers of the random sets (only -ceiling captured serves them; 5,000 are over 1 GB)")
	ceiling := flag.String("ceiling", "captured", "what to answer: captured (each request its captured answer), typical (one hot answer per case, of the case's mean size), first (the first page and the first set's answer, whatever was asked)")
	flag.Parse()
	if *ceiling != "captured" && *ceiling != "typical" && *ceiling != "first" {
		log.Fatalf("-ceiling %q: captured, typical or first", *ceiling)
	}
	if *capture {
		if err := captureFrom(*url, *key, *dir, *sets, *deep, *keep); err != nil {
			log.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(filepath.Join(*dir, "answers.json"))
	if err != nil {
		log.Fatal(err)
	}
	var a answers
	if err := json.Unmarshal(raw, &a); err != nil {
		log.Fatal(err)
	}
	feed, videos := bytesOf(a.Feed), bytesOf(a.Videos)
	mux := http.NewServeMux()
	first := feed["limit="+strconv.Itoa(schemas.DefaultPageSize)]
	oneSet := videos[a.First]
	deepPage, randomSet := first, oneSet
	if *ceiling == "typical" {
		deepPage, randomSet = feed[a.TypicalPage], videos[a.TypicalSet]
	}
	mux.HandleFunc("GET "+schemas.PathFeed, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case *ceiling == "captured":
			serve(w, feed[r.URL.RawQuery])
		case strings.Contains(r.URL.RawQuery, "cursor="):
			serve(w, deepPage)
		default:
			serve(w, first)
		}
	})
	mux.HandleFunc("POST "+schemas.PathVideos, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		switch {
		case *ceiling == "captured":
			serve(w, videos[string(body)])
		case string(body) == a.First:
			serve(w, oneSet)
		default:
			serve(w, randomSet)
		}
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	// The address it got (-addr 127.0.0.1:0 picks a free port), for the script.
	if err := os.WriteFile(filepath.Join(*dir, "addr.txt"), []byte(ln.Addr().String()), 0o600); err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.Serve(ln, mux))
}

func bytesOf(m map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

func serve(w http.ResponseWriter, body []byte) {
	if body == nil {
		http.Error(w, "not captured", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// captureFrom walks the feed and asks for the videos sets.
func captureFrom(base, key, dir string, sets, deep int, keep bool) error {
	a := answers{Feed: map[string]string{}, Videos: map[string]string{}}
	query := "limit=" + strconv.Itoa(schemas.DefaultPageSize)
	targets, ids, err := walkFeed(base, key, query, a.Feed)
	if err != nil {
		return err
	}
	if len(ids) < schemas.MaxVideoIDs {
		return fmt.Errorf("the feed names %d videos, fewer than %d", len(ids), schemas.MaxVideoIDs)
	}
	// The first 20 ids the feed names, then random sets of 20 (seeded).
	rng := rand.New(rand.NewPCG(1, 2))
	bodies, err := captureSets(base, key, ids, sets, keep, rng, &a)
	if err != nil {
		return err
	}
	deeper := pickDeep(targets[1:], deep, rng)
	a.TypicalPage = typicalPage(deeper, a.Feed)
	if err := writeCapture(dir, a, targets, deeper, bodies); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "captured: %d feed pages (first %d bytes; %d deep cursors kept, typical %d bytes), %d videos sets (%d answers kept, the first %d bytes, typical %d bytes), %d ids\n",
		len(targets), len(a.Feed[query]), len(deeper), len(a.Feed[a.TypicalPage]), len(bodies), len(a.Videos), len(a.Videos[bodies[0]]), len(a.Videos[a.TypicalSet]), len(ids))
	return nil
}

// walkFeed reads the whole feed from its first page (query), every cursor,
// into feed by query. It returns the pages' targets and the ids of the
// videos the events name, in the order first named.
func walkFeed(base, key, query string, feed map[string]string) (targets, ids []string, err error) {
	seen := map[string]bool{}
	for q := query; ; {
		raw, err := fetch("GET", base+schemas.PathFeed+"?"+q, key, nil)
		if err != nil {
			return nil, nil, err
		}
		feed[q] = string(raw)
		targets = append(targets, schemas.PathFeed+"?"+q)
		var page struct {
			Events []struct {
				Video *struct {
					ID string `json:"platformVideoId"`
				} `json:"video"`
			} `json:"events"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, nil, fmt.Errorf("feed page: %w", err)
		}
		for _, e := range page.Events {
			if e.Video != nil && !seen[e.Video.ID] {
				seen[e.Video.ID] = true
				ids = append(ids, e.Video.ID)
			}
		}
		if page.NextCursor == nil {
			break
		}
		q = query + "&cursor=" + *page.NextCursor
	}
	return targets, ids, nil
}

// captureSets asks for the first set of ids and sets random ones, and
// returns the request bodies. It keeps in a the first set's answer, the
// random ones' when keep is set, and the set whose answer is of typical
// size (of the first typicalSample) with its answer.
func captureSets(base, key string, ids []string, sets int, keep bool, rng *rand.Rand, a *answers) ([]string, error) {
	var bodies []string
	sizes := map[string]int{} // answer sizes of the sampled random sets
	for n := range sets + 1 {
		set := ids[:schemas.MaxVideoIDs]
		if n > 0 {
			set = make([]string, schemas.MaxVideoIDs)
			for i, j := range rng.Perm(len(ids))[:schemas.MaxVideoIDs] {
				set[i] = ids[j]
			}
		}
		body, _ := json.Marshal(map[string][]string{"videoIds": set})
		bodies = append(bodies, string(body))
		if n > typicalSample && !keep {
			continue
		}
		answer, err := fetch("POST", base+schemas.PathVideos, key, body)
		if err != nil {
			return nil, err
		}
		if n > 0 && n <= typicalSample {
			sizes[string(body)] = len(answer)
		}
		if n == 0 || keep {
			a.Videos[string(body)] = string(answer)
		}
	}
	a.First = bodies[0]
	a.TypicalSet = nearestMean(bodies[1:], sizes)
	if _, ok := a.Videos[a.TypicalSet]; !ok {
		answer, err := fetch("POST", base+schemas.PathVideos, key, []byte(a.TypicalSet))
		if err != nil {
			return nil, err
		}
		a.Videos[a.TypicalSet] = string(answer)
	}
	return bodies, nil
}

// pickDeep is the deep pages' targets to keep: all of them, or deep of
// them when deep is fewer.
func pickDeep(deeper []string, deep int, rng *rand.Rand) []string {
	if deep > 0 && deep < len(deeper) {
		// deep cursors drawn from the whole walk, seeded
		picked := make([]string, deep)
		for i, j := range rng.Perm(len(deeper))[:deep] {
			picked[i] = deeper[j]
		}
		deeper = picked
	}
	return deeper
}

// typicalPage is the query of the deep page whose answer is nearest the
// deep pages' mean size.
func typicalPage(deeper []string, feed map[string]string) string {
	pages := map[string]int{}
	queries := make([]string, len(deeper))
	for i, t := range deeper {
		queries[i] = strings.TrimPrefix(t, schemas.PathFeed+"?")
		pages[queries[i]] = len(feed[queries[i]])
	}
	return nearestMean(queries, pages)
}

// writeCapture writes the capture's files to dir: answers.json for the
// server, and for wrk the targets and the request bodies, a line each.
func writeCapture(dir string, a answers, targets, deeper, bodies []string) error {
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	files := map[string]string{
		"answers.json": string(raw),
		"first.txt":    targets[0] + "\n",
		"deep.txt":     strings.Join(deeper, "\n") + "\n",
		"one.txt":      bodies[0] + "\n",
		"random.txt":   strings.Join(bodies[1:], "\n") + "\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// typicalSample is how many random sets the mean answer size is taken over.
const typicalSample = 500

// nearestMean is the key, of those in order that size has, whose size is
// nearest the mean of them all (the first of equals).
func nearestMean(order []string, size map[string]int) string {
	total, n := 0, 0
	for _, k := range order {
		if v, ok := size[k]; ok {
			total, n = total+v, n+1
		}
	}
	if n == 0 {
		return ""
	}
	mean := float64(total) / float64(n)
	best, bestGap := "", math.Inf(1)
	for _, k := range order {
		if v, ok := size[k]; ok && math.Abs(float64(v)-mean) < bestGap {
			best, bestGap = k, math.Abs(float64(v)-mean)
		}
	}
	return best
}

func fetch(method, url, key string, body []byte) ([]byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: status %d: %.200s", method, req.URL.Path, resp.StatusCode, raw)
	}
	return raw, nil
}
