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
// With -constant it answers every feed request with the first page and
// every videos request with the first set's answer, whatever was asked:
// the ceiling of issue 27, a server with no lookup and one hot answer.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
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
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "listen address")
	dir := flag.String("dir", ".", "directory of answers.json")
	capture := flag.Bool("capture", false, "fetch the answers from a simulator instead of serving")
	url := flag.String("url", "", "simulator base URL (with -capture)")
	key := flag.String("key", "", "Pro API key (with -capture)")
	sets := flag.Int("sets", 500, "random sets of 20 ids to capture")
	deep := flag.Int("deep", 0, "deep cursors to keep, drawn from the whole walk (0: every one)")
	keep := flag.Bool("answers", true, "keep the answers of the random sets (-constant serves none of them; 5,000 are over 1 GB)")
	constant := flag.Bool("constant", false, "answer every feed request with the first page and every videos request with the first set's answer (a ceiling with no lookup and one hot answer)")
	flag.Parse()
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
	mux.HandleFunc("GET "+schemas.PathFeed, func(w http.ResponseWriter, r *http.Request) {
		if *constant {
			serve(w, first)
			return
		}
		serve(w, feed[r.URL.RawQuery])
	})
	mux.HandleFunc("POST "+schemas.PathVideos, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if *constant {
			serve(w, oneSet)
			return
		}
		serve(w, videos[string(body)])
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
	var targets, ids []string
	seen := map[string]bool{}
	query := "limit=" + strconv.Itoa(schemas.DefaultPageSize)
	for q := query; ; {
		raw, err := fetch("GET", base+schemas.PathFeed+"?"+q, key, nil)
		if err != nil {
			return err
		}
		a.Feed[q] = string(raw)
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
			return fmt.Errorf("feed page: %w", err)
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
	if len(ids) < schemas.MaxVideoIDs {
		return fmt.Errorf("the feed names %d videos, fewer than %d", len(ids), schemas.MaxVideoIDs)
	}
	// The first 20 ids the feed names, then random sets of 20 (seeded).
	rng := rand.New(rand.NewPCG(1, 2))
	var bodies []string
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
		if n > 0 && !keep {
			continue
		}
		answer, err := fetch("POST", base+schemas.PathVideos, key, body)
		if err != nil {
			return err
		}
		a.Videos[string(body)] = string(answer)
	}
	a.First = bodies[0]
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	deeper := targets[1:]
	if deep > 0 && deep < len(deeper) {
		// deep cursors drawn from the whole walk, seeded
		picked := make([]string, deep)
		for i, j := range rng.Perm(len(deeper))[:deep] {
			picked[i] = deeper[j]
		}
		deeper = picked
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
	fmt.Fprintf(os.Stderr, "captured: %d feed pages (first %d bytes; %d deep cursors kept), %d videos sets (%d answers kept, the first %d bytes), %d ids\n",
		len(targets), len(a.Feed[query]), len(deeper), len(bodies), len(a.Videos), len(a.Videos[bodies[0]]), len(ids))
	return nil
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
