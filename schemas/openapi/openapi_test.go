package openapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"go.yaml.in/yaml/v3"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/openapi"
)

// The document, and the corpus of fixtures, relative to this package.
const (
	documentPath = "../openapi.yaml"
	corpusDir    = "../../fixtures/corpus"
)

func build(t *testing.T) []openapi.Component {
	t.Helper()
	comps, err := openapi.Build(schemas.FS())
	if err != nil {
		t.Fatal(err)
	}
	return comps
}

func TestCommittedDocumentIsUpToDate(t *testing.T) {
	committed, err := os.ReadFile(documentPath)
	if err != nil {
		t.Fatal(err)
	}
	generated, err := openapi.Update(committed, os.DirFS(".."))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(committed, generated) {
		return
	}
	have, want := strings.Split(string(committed), "\n"), strings.Split(string(generated), "\n")
	for i := range max(len(have), len(want)) {
		var h, w string
		if i < len(have) {
			h = have[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if h != w {
			t.Fatalf("schemas/openapi.yaml is not what the generator writes from the schema files; run `go generate ./schemas`.\nfirst difference at line %d:\n  committed: %q\n  generated: %q", i+1, h, w)
		}
	}
}

// The committed YAML, read by a real YAML parser, holds exactly the
// generated components, and every $ref in it is local and resolves.
func TestDocumentReadsBackAndIsSelfContained(t *testing.T) {
	raw, err := os.ReadFile(documentPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc = normalize(t, doc)
	got, _ := jsondoc.Get(doc, "/components/schemas")
	want := normalize(t, openapi.Schemas(build(t)))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("components/schemas of the YAML differ from the generated ones:\n yaml: %s\n want: %s", jsondoc.Encode(got), jsondoc.Encode(want))
	}
	refs := 0
	jsondoc.Walk(doc, func(ptr string, v any) {
		if jsondoc.Last(ptr) != "$ref" {
			return
		}
		refs++
		ref, _ := v.(string)
		target, ok := strings.CutPrefix(ref, "#")
		if !ok {
			t.Errorf("%s: $ref %q is not local", ptr, ref)
			return
		}
		if _, ok := jsondoc.Get(doc, target); !ok {
			t.Errorf("%s: $ref %q resolves to nothing", ptr, ref)
		}
	})
	if refs < 40 {
		t.Errorf("only %d $refs found: the walk is broken", refs)
	}
	if strings.Contains(string(raw), "$id") || strings.Contains(string(raw), ".json") {
		t.Error("the document still names a schema file or an $id")
	}
}

// normalize makes a YAML or JSON tree comparable: it goes through JSON.
func normalize(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsondoc.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestComponentsOfTheSpec(t *testing.T) {
	var names []string
	for _, c := range build(t) {
		names = append(names, c.Name)
	}
	want := []string{"ChannelRef", "VideoStats", "VideoSummary", "VideoRef", "Event",
		"VideoPublishedEvent", "TitleChangedEvent", "ThumbnailChangedEvent", "TitleABTestEvent",
		"TitleABTestConcludedEvent", "ThumbnailABTestEvent", "ThumbnailABTestConcludedEvent",
		"MembersOnlyChangedEvent", "SubscriberChangeEvent", "ChannelRenamedEvent", "ChannelAvatarChangedEvent",
		"StatSample", "VideoEntry", "FeedPage", "ErrorBody", "HealthBody", "VideosRequest", "VideosResponse"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("components %v\nwant %v", names, want)
	}
}

// corpusDoc is one fixture of the corpus.
type corpusDoc struct {
	path     string
	kind     string
	resource schemas.Resource
	valid    bool
	payload  any
}

func readCorpus(t *testing.T) []corpusDoc {
	t.Helper()
	var docs []corpusDoc
	err := filepath.WalkDir(corpusDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(corpusDir, path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		doc := corpusDoc{path: rel, kind: parts[1], valid: parts[0] == "valid"}
		v, err := jsondoc.Decode(raw)
		if err != nil {
			return err
		}
		if doc.valid {
			doc.payload = v
			doc.resource = resourceOfKind(t, doc.kind)
		} else {
			r, _ := jsondoc.String(v, "/resource")
			doc.resource = schemas.Resource(r)
			doc.payload, _ = jsondoc.Get(v, "/payload")
		}
		docs = append(docs, doc)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func resourceOfKind(t *testing.T, kind string) schemas.Resource {
	for _, c := range build(t) {
		if c.EventType == "" && c.Name == kind || c.EventType == kind {
			return c.Resource
		}
	}
	t.Fatalf("corpus kind %q is no component", kind)
	return ""
}

// The document and the validator accept and reject the same documents:
// every valid and every invalid fixture of the corpus.
func TestDocumentAgreesWithValidatorOnCorpus(t *testing.T) {
	comps := build(t)
	v, err := openapi.Compile(comps)
	if err != nil {
		t.Fatal(err)
	}
	docs := readCorpus(t)
	var valid, invalid int
	for _, d := range docs {
		// The components a fixture of this kind is checked against: the
		// resource's, and an event type's own component.
		names := []string{}
		for _, c := range comps {
			if c.EventType == "" && c.Resource == d.resource || c.EventType != "" && c.EventType == d.kind {
				names = append(names, c.Name)
			}
		}
		if len(names) == 0 {
			t.Errorf("%s: no component for %s", d.path, d.resource)
			continue
		}
		verr := schemas.Validate(d.resource, d.payload)
		var se *schemas.Error
		if verr != nil && !errors.As(verr, &se) {
			t.Fatal(verr)
		}
		if (verr == nil) != d.valid {
			t.Errorf("%s: the validator says %v", d.path, verr)
		}
		for _, name := range names {
			derr := v.Validate(name, d.payload)
			if (derr == nil) != (verr == nil) {
				t.Errorf("%s: the validator and the document (%s) disagree:\n validator: %v\n document: %v", d.path, name, verr, derr)
			}
		}
		if d.valid {
			valid++
		} else {
			invalid++
		}
	}
	if valid < 100 || invalid < 250 {
		t.Errorf("only %d valid and %d invalid fixtures read from %s", valid, invalid, corpusDir)
	}
	t.Logf("%d valid and %d invalid fixtures: the document and the validator agree on each", valid, invalid)
}

// Every valid event matches its own type's component and no other, so
// the oneOf of Event is exclusive and its discriminator tells the truth.
func TestEachEventMatchesOnlyItsType(t *testing.T) {
	comps := build(t)
	v, err := openapi.Compile(comps)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range readCorpus(t) {
		if !d.valid {
			continue
		}
		var events []any
		switch d.resource {
		case schemas.Event:
			events = []any{d.payload}
		case schemas.FeedPage:
			events = jsondoc.Items(d.payload, "/events")
		default:
			continue
		}
		for _, ev := range events {
			typ, _ := jsondoc.String(ev, "/type")
			seen[typ] = true
			for _, c := range comps {
				if c.EventType == "" {
					continue
				}
				err := v.Validate(c.Name, ev)
				if (err == nil) != (c.EventType == typ) {
					t.Errorf("%s: a %s event: %s says %v", d.path, typ, c.Name, err)
				}
			}
		}
	}
	if len(seen) != len(schemas.EventTypes) {
		t.Errorf("events of %d types seen, want %d", len(seen), len(schemas.EventTypes))
	}
}

func TestEventComponentName(t *testing.T) {
	for typ, want := range map[string]string{
		"video_published":             "VideoPublishedEvent",
		"thumbnail_ab_test_concluded": "ThumbnailABTestConcludedEvent",
		"subscriber_change":           "SubscriberChangeEvent",
	} {
		if got := openapi.EventComponentName(typ); got != want {
			t.Errorf("EventComponentName(%q) = %q, want %q", typ, got, want)
		}
	}
}

// A construct the translation does not know fails the generator, naming
// the file and the place, instead of being dropped from the document.
func TestUnknownConstructsFail(t *testing.T) {
	for _, tc := range []struct {
		name, file, old, new, want string
	}{
		{"assertion beside a common $ref", "stat-sample.json",
			`"viewCount": {
      "$ref": "common.json#/$defs/count"`, `"viewCount": {
      "maximum": 5,
      "$ref": "common.json#/$defs/count"`, "stat-sample.json: /properties/viewCount: $ref \"common.json#/$defs/count\" has assertions beside it (maximum)"},
		{"unknown definition", "video-ref.json", `common.json#/$defs/uri"`, `common.json#/$defs/url"`, "names no definition"},
		{"a ref to a file that is no resource", "video-ref.json", `common.json#/$defs/uri"`, `other.json"`, "neither a schema file"},
		{"an event keyword", "event.json", `"type": "object",`, `"type": "object", "additionalProperties": false,`, "/additionalProperties: not translated"},
		{"an enum out of step with the branches", "event.json", `"channel_renamed",
        "channel_avatar_changed"
      ]`, `"channel_renamed"
      ]`, "/allOf selects"},
		{"a type redefining a common field", "event.json", `"oldTitle": {`, `"id": {"type": "string"}, "oldTitle": {`, "/$defs/title_changed: /properties/id: also a field of every event"},
		{"a branch of another shape", "event.json", `"then": {
        "$ref": "#/$defs/title_changed"
      }`, `"then": {
        "$ref": "#/$defs/title_changed", "required": ["video"]
      }`, "/allOf/1: not translated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			err := fs.WalkDir(schemas.FS(), ".", func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				raw, err := fs.ReadFile(schemas.FS(), path)
				if path == tc.file {
					if !bytes.Contains(raw, []byte(tc.old)) {
						t.Fatalf("%s does not contain %s", path, tc.old)
					}
					raw = bytes.Replace(raw, []byte(tc.old), []byte(tc.new), 1)
				}
				fsys[path] = &fstest.MapFile{Data: raw}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = openapi.Build(fsys)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Build = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
