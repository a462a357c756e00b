// Command gocodegen shows that the Go types oapi-codegen generates from
// schemas/openapi.yaml (package tcmapi, written by ci/openapi-tools.sh and
// not committed) read what a server of the contract sends and write it back
// unchanged: every captured feed page and tracked-videos answer is decoded,
// each event is turned into its type's struct through the discriminator,
// and the struct and the whole document are encoded again and compared
// with the original, member by member. Events of all eleven types must
// pass.
//
// It is a module of its own (go.mod beside it) because the generated code
// imports oapi-codegen's runtime, which the kit itself does not need.
//
//	go run . CAPTURE_DIR
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/ci/gocodegen/tcmapi"
)

// eventTypes are the eleven event types of the contract.
var eventTypes = []string{
	"video_published", "title_changed", "thumbnail_changed", "title_ab_test",
	"title_ab_test_concluded", "thumbnail_ab_test", "thumbnail_ab_test_concluded",
	"members_only_changed", "subscriber_change", "channel_renamed", "channel_avatar_changed",
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gocodegen CAPTURE_DIR  (feed-page-*.json and videos-response-*.json)")
		os.Exit(2)
	}
	problems, counts, docs, err := check(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gocodegen:", err)
		os.Exit(1)
	}
	for _, t := range eventTypes {
		if counts[t] == 0 {
			problems = append(problems, "no event of type "+t+" was captured")
		}
	}
	for _, p := range problems {
		fmt.Println("FAIL:", p)
	}
	var total int
	for _, n := range counts {
		total += n
	}
	if len(problems) > 0 {
		fmt.Printf("oapi-codegen round trip: %d problem(s)\n", len(problems))
		os.Exit(1)
	}
	fmt.Printf("oapi-codegen round trip: %d documents and %d events of all %d types decoded and re-encoded with no member lost or changed\n", docs, total, len(eventTypes))
}

func check(dir string) (problems []string, counts map[string]int, docs int, err error) {
	counts = map[string]int{}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, 0, err
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, 0, err
		}
		name := filepath.Base(f)
		var events []tcmapi.Event
		switch {
		case strings.HasPrefix(name, "feed-page-"):
			var page tcmapi.FeedPage
			problems = append(problems, roundTrip(name, raw, &page)...)
			events = page.Events
		case strings.HasPrefix(name, "videos-response-"):
			var answer tcmapi.VideosResponse
			problems = append(problems, roundTrip(name, raw, &answer)...)
			for _, e := range answer.Videos {
				events = append(events, e.Events...)
			}
		default:
			continue
		}
		docs++
		for i, ev := range events {
			where := fmt.Sprintf("%s event %d", name, i)
			typ, err := ev.Discriminator()
			if err != nil {
				problems = append(problems, where+": "+err.Error())
				continue
			}
			typed, err := ev.ValueByDiscriminator()
			if err != nil {
				problems = append(problems, where+": "+err.Error())
				continue
			}
			counts[typ]++
			original, _ := ev.MarshalJSON()
			again, err := json.Marshal(typed)
			if err != nil {
				problems = append(problems, where+": "+err.Error())
				continue
			}
			if diff := compare(original, again); diff != "" {
				problems = append(problems, fmt.Sprintf("%s (%s, decoded as %T): %s", where, typ, typed, diff))
			}
		}
	}
	if docs == 0 {
		return nil, nil, 0, fmt.Errorf("no feed-page-*.json or videos-response-*.json in %s", dir)
	}
	return problems, counts, docs, nil
}

// roundTrip decodes raw into v, encodes v again and compares.
func roundTrip(name string, raw []byte, v any) []string {
	if err := json.Unmarshal(raw, v); err != nil {
		return []string{name + ": " + err.Error()}
	}
	again, err := json.Marshal(v)
	if err != nil {
		return []string{name + ": " + err.Error()}
	}
	if diff := compare(raw, again); diff != "" {
		return []string{name + ": " + diff}
	}
	return nil
}

// compare reports the first member that differs between two JSON
// documents (numbers compared as written), or "".
func compare(a, b []byte) string {
	va, err := decode(a)
	if err != nil {
		return "original: " + err.Error()
	}
	vb, err := decode(b)
	if err != nil {
		return "re-encoded: " + err.Error()
	}
	return diff("", va, vb)
}

func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func diff(at string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %v became %v", orRoot(at), short(a), short(b))
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			xv, inA := x[k]
			yv, inB := y[k]
			switch {
			case !inB:
				return fmt.Sprintf("%s/%s: lost (was %v)", at, k, short(xv))
			case !inA:
				return fmt.Sprintf("%s/%s: added (%v)", at, k, short(yv))
			}
			if d := diff(at+"/"+k, xv, yv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %v became %v", orRoot(at), short(a), short(b))
		}
		for i := range x {
			if d := diff(fmt.Sprintf("%s/%d", at, i), x[i], y[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("%s: %v became %v", orRoot(at), short(a), short(b))
	}
	return ""
}

func short(v any) string {
	raw, _ := json.Marshal(v)
	if len(raw) > 80 {
		return string(raw[:80]) + "…"
	}
	return string(raw)
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
