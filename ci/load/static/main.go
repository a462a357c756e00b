// Command static is the ceiling of the load measurement: a minimal Go HTTP
// server that answers the feed and the tracked-videos paths with bytes held
// in memory, the same bytes the simulator served. Comparing the simulator
// with it, on the same machine and core, measures what the simulator's own
// work costs.
//
//	static -capture -url URL -key KEY -out DIR   # fetch feed.json, videos.json, ids.json from a simulator
//	static -addr 127.0.0.1:9090 -dir DIR         # serve them
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tcmkit/tcmkit/schemas"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "listen address")
	dir := flag.String("dir", ".", "directory with feed.json and videos.json")
	capture := flag.Bool("capture", false, "fetch the bytes from a simulator instead of serving")
	url := flag.String("url", "", "simulator base URL (with -capture)")
	key := flag.String("key", "", "Pro API key (with -capture)")
	flag.Parse()
	if *capture {
		if err := captureFrom(*url, *key, *dir); err != nil {
			log.Fatal(err)
		}
		return
	}
	feed, err := os.ReadFile(filepath.Join(*dir, "feed.json"))
	if err != nil {
		log.Fatal(err)
	}
	videos, err := os.ReadFile(filepath.Join(*dir, "videos.json"))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+schemas.PathFeed, serve(feed))
	mux.HandleFunc("POST "+schemas.PathVideos, serve(videos))
	log.Fatal(http.ListenAndServe(*addr, mux))
}

func serve(body []byte) http.HandlerFunc {
	length := strconv.Itoa(len(body))
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", length)
		_, _ = w.Write(body)
	}
}

// captureFrom saves the first feed page (limit=50), the ids of 20 videos
// it names, and the tracked-videos answer for them.
func captureFrom(base, key, dir string) error {
	feed, err := fetch("GET", base+schemas.PathFeed+"?limit="+strconv.Itoa(schemas.DefaultPageSize), key, nil)
	if err != nil {
		return err
	}
	var page struct {
		Events []struct {
			Video *struct {
				ID string `json:"platformVideoId"`
			} `json:"video"`
		} `json:"events"`
		NextCursor *string `json:"nextCursor"`
	}
	ids, seen := []string{}, map[string]bool{}
	cursor := ""
	for len(ids) < schemas.MaxVideoIDs {
		raw := feed
		if cursor != "" {
			if raw, err = fetch("GET", base+schemas.PathFeed+"?limit="+strconv.Itoa(schemas.MaxPageSize)+"&cursor="+cursor, key, nil); err != nil {
				return err
			}
		}
		page.NextCursor = nil
		if err := json.Unmarshal(raw, &page); err != nil {
			return fmt.Errorf("feed page: %w", err)
		}
		for _, e := range page.Events {
			if e.Video != nil && !seen[e.Video.ID] && len(ids) < schemas.MaxVideoIDs {
				seen[e.Video.ID] = true
				ids = append(ids, e.Video.ID)
			}
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	req, _ := json.Marshal(map[string][]string{"videoIds": ids})
	videos, err := fetch("POST", base+schemas.PathVideos, key, req)
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"feed.json": feed, "videos.json": videos, "videos-request.json": req} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("captured: feed page %d bytes, videos (%d ids) %d bytes\n", len(feed), len(ids), len(videos))
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
