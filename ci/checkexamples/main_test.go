package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// bundle builds a minimal document that agrees with contract.go: the
// health operation's 200 body and parameters carry the given pieces, and
// HealthBody is a component as the generator writes it.
func bundle(media, param, examples string) string {
	return `{
  "openapi": "3.1.0",
  "info": {"title": "t", "version": "` + schemas.APIVersion + `"},
  "paths": {
    "` + schemas.PathHealth + `": {"post": {
      "parameters": [` + param + `],
      "responses": {"200": {"description": "ok", "content": {"application/json": ` + media + `}}}
    }},
    "` + schemas.PathFeed + `": {"get": {"parameters": [{"$ref": "#/components/parameters/limit"}], "responses": {}}},
    "` + schemas.PathVideos + `": {"post": {"responses": {}}}
  },
  "components": {
    "parameters": {"limit": {"name": "limit", "in": "query",
      "description": "Events per page; larger values are\n capped at ` + strconv.Itoa(schemas.MaxPageSize) + `.",
      "schema": {"type": "integer", "default": ` + strconv.Itoa(schemas.DefaultPageSize) + `}}},
    "schemas": {
      "HealthBody": {"type": "object", "required": ["status"], "properties": {"status": {"const": "ok"}}},
      "props": {"description": "properties named like OpenAPI fields are not examples",
        "properties": {"schema": {"type": "string"}, "example": {"type": "string"}}},
      "stranger": {"type": "object"}
    },
    "examples": {` + examples + `}
  }
}`
}

func decode(t *testing.T, raw string) map[string]any {
	t.Helper()
	doc, err := jsondoc.Decode([]byte(raw))
	if err != nil {
		t.Fatalf("test document: %v", err)
	}
	return doc.(map[string]any)
}

func TestCheckContract(t *testing.T) {
	limit := func(doc map[string]any) map[string]any {
		return get(doc, "components", "parameters", "limit").(map[string]any)
	}
	tests := []struct {
		name   string
		change func(doc map[string]any)
		want   []string // substrings of the one problem; none if nil
	}{
		{"agrees", func(map[string]any) {}, nil},
		{"wrong version", func(d map[string]any) { d["info"].(map[string]any)["version"] = "1.1.0" }, []string{"/info/version", `"1.1.0"`}},
		{"missing path", func(d map[string]any) { delete(d["paths"].(map[string]any), schemas.PathVideos) }, []string{"/paths", schemas.PathVideos}},
		{"versioned extra path", func(d map[string]any) { d["paths"].(map[string]any)["/v1"+schemas.PathFeed] = map[string]any{} }, []string{"/paths", "/v1"}},
		{"wrong default", func(d map[string]any) { limit(d)["schema"].(map[string]any)["default"] = 20 }, []string{"default", "is 20"}},
		{"maximum declared", func(d map[string]any) { limit(d)["schema"].(map[string]any)["maximum"] = schemas.MaxPageSize }, []string{"maximum", "capped, not rejected"}},
		{"cap not described", func(d map[string]any) { limit(d)["description"] = "events per page" }, []string{"description", "capped at"}},
		{"no limit parameter", func(d map[string]any) { delete(d["components"].(map[string]any), "parameters") }, []string{"parameters", "not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := decode(t, bundle(`{"schema": {"type": "object"}, "example": {}}`, ``, ``))
			tt.change(doc)
			problems := CheckContract(doc)
			if tt.want == nil {
				if len(problems) != 0 {
					t.Fatalf("want no problem, got %v", problems)
				}
				return
			}
			if len(problems) != 1 {
				t.Fatalf("want 1 problem, got %v", problems)
			}
			for _, w := range tt.want {
				if got := problems[0].String(); !strings.Contains(got, w) {
					t.Errorf("problem %q does not contain %q", got, w)
				}
			}
		})
	}
}

func TestCheck(t *testing.T) {
	const ref = `"schema": {"$ref": "#/components/schemas/HealthBody"}`
	tests := []struct {
		name    string
		doc     string
		checked int
		// problems lists, per problem, substrings its text must contain.
		problems [][]string
	}{
		{
			name:    "valid inline example of a schema file",
			doc:     bundle(`{`+ref+`, "example": {"status": "ok"}}`, ``, ``),
			checked: 1,
		},
		{
			name:     "invalid inline example names pointer, schema file and rule",
			doc:      bundle(`{`+ref+`, "example": {"status": "down"}}`, ``, ``),
			checked:  1,
			problems: [][]string{{"/content/application~1json/example", "HealthBody", "/status", "const"}},
		},
		{
			name: "named examples are resolved through $ref and checked by name",
			doc: bundle(`{`+ref+`, "examples": {"good": {"value": {"status": "ok"}}, "bad": {"$ref": "#/components/examples/Bad"}}}`, ``,
				`"Bad": {"value": {}}`),
			checked:  2,
			problems: [][]string{{"/examples/bad/value", "status", "required"}},
		},
		{
			name:     "a media type without any example is a problem",
			doc:      bundle(`{`+ref+`}`, ``, ``),
			problems: [][]string{{"/responses/200/content/application~1json", "no example"}},
		},
		{
			name:     "inline parameter schema is compiled on its own",
			doc:      bundle(`{`+ref+`, "example": {"status": "ok"}}`, `{"name": "limit", "in": "query", "schema": {"type": "integer"}, "example": "ten"}`, ``),
			checked:  2,
			problems: [][]string{{"/parameters/0/example", "inline", "want integer"}},
		},
		{
			name:     "format assertions are on for inline schemas",
			doc:      bundle(`{`+ref+`, "example": {"status": "ok"}}`, `{"name": "u", "in": "query", "schema": {"type": "string", "format": "uri"}, "example": "not a uri"}`, ``),
			checked:  2,
			problems: [][]string{{"/parameters/0/example", "uri"}},
		},
		{
			name:     "a component that is not generated from a schema file is refused",
			doc:      bundle(`{"schema": {"$ref": "#/components/schemas/stranger"}, "example": {}}`, ``, ``),
			problems: [][]string{{"/schema", "stranger", "none of the components generated"}},
		},
		{
			name:     "an inline schema with a $ref is compiled from the document",
			doc:      bundle(`{"schema": {"type": "array", "items": {"$ref": "#/components/schemas/HealthBody"}}, "example": [{"status": "down"}]}`, ``, ``),
			checked:  1,
			problems: [][]string{{"/example", "inline", "the document's schema", "/0/status"}},
		},
		{
			name: "the document's schema is checked besides the validator's",
			doc: strings.Replace(bundle(`{`+ref+`, "example": {"status": "ok"}}`, ``, ``),
				`"required": ["status"]`, `"required": ["status", "since"]`, 1),
			checked:  1,
			problems: [][]string{{"/example", "HealthBody", "the document's schema", "since"}},
		},
		{
			name:     "externalValue cannot be checked",
			doc:      bundle(`{`+ref+`, "examples": {"far": {"externalValue": "https://elsewhere.test/ok.json"}}}`, ``, ``),
			problems: [][]string{{"/examples/far", "externalValue"}},
		},
		{
			name:     "a dangling $ref is a problem, not a crash",
			doc:      bundle(`{`+ref+`, "examples": {"gone": {"$ref": "#/components/examples/Gone"}}}`, ``, ``),
			problems: [][]string{{"/examples/gone", "not found"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checked, problems := Check(decode(t, tt.doc))
			if checked != tt.checked {
				t.Errorf("checked %d examples, want %d", checked, tt.checked)
			}
			if len(problems) != len(tt.problems) {
				t.Fatalf("got %d problems, want %d: %v", len(problems), len(tt.problems), problems)
			}
			for i, want := range tt.problems {
				got := problems[i].String()
				for _, w := range want {
					if !strings.Contains(got, w) {
						t.Errorf("problem %d = %q, want it to contain %q", i, got, w)
					}
				}
			}
		})
	}
}

// The committed document: every example valid, the contract restated right.
func TestCommittedDocument(t *testing.T) {
	var out bytes.Buffer
	if code := run(&out, "../../schemas/openapi.yaml"); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
	t.Log(strings.TrimSpace(out.String()))
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const ref = `"schema": {"$ref": "#/components/schemas/HealthBody"}`
	tests := []struct {
		name string
		path string
		code int
		out  string
	}{
		{"valid", write("ok.json", bundle(`{`+ref+`, "example": {"status": "ok"}}`, ``, ``)), 0, "all 1 valid"},
		{"invalid", write("bad.json", bundle(`{`+ref+`, "example": {"status": 1}}`, ``, ``)), 1, "1 checked, 1 problem(s)"},
		{"not YAML", write("broken.yaml", "openapi: [3.1.0\n"), 1, "broken.yaml"},
		{"YAML", write("ok.yaml", "# a comment\n"+bundle(`{`+ref+`, "example": {"status": "ok"}}`, ``, ``)), 0, "all 1 valid"},
		{"missing file", filepath.Join(dir, "nope.json"), 1, "nope.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(&out, tt.path); code != tt.code {
				t.Errorf("exit code %d, want %d; output:\n%s", code, tt.code, out.String())
			}
			if !strings.Contains(out.String(), tt.out) {
				t.Errorf("output %q does not contain %q", out.String(), tt.out)
			}
		})
	}
}
