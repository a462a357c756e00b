package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
)

// bundle builds a minimal bundled document: one operation whose 200 body
// and parameter carry the given pieces, and a health-body.json component as
// Redocly bundles it (with its $id).
func bundle(media, param, examples string) string {
	return `{
  "openapi": "3.1.0",
  "paths": {"/api/public/health": {"post": {
    "parameters": [` + param + `],
    "responses": {"200": {"description": "ok", "content": {"application/json": ` + media + `}}}
  }}},
  "components": {
    "schemas": {
      "HealthBody": {"$ref": "#/components/schemas/health-body"},
      "health-body": {"$id": "` + schemas.BaseURI + `health-body.json", "type": "object"},
      "props": {"description": "properties named like OpenAPI fields are not examples",
        "properties": {"schema": {"type": "string"}, "example": {"type": "string"}}},
      "stranger": {"$id": "https://elsewhere.test/x.json", "type": "object"}
    },
    "examples": {` + examples + `}
  }
}`
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
			problems: [][]string{{"/content/application~1json/example", "health-body.json", "/status", "const"}},
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
			name:     "a schema that is not one of the schema files is refused",
			doc:      bundle(`{"schema": {"$ref": "#/components/schemas/stranger"}, "example": {}}`, ``, ``),
			problems: [][]string{{"/schema", "elsewhere.test", "none of the schema files"}},
		},
		{
			name:     "an inline schema with a $ref is refused",
			doc:      bundle(`{"schema": {"type": "array", "items": {"$ref": "#/components/schemas/HealthBody"}}, "example": []}`, ``, ``),
			problems: [][]string{{"/schema", "$ref one of the schema files"}},
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
			doc, err := schemas.Decode([]byte(tt.doc))
			if err != nil {
				t.Fatalf("test document: %v", err)
			}
			checked, problems := Check(doc.(map[string]any))
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
		{"not JSON", write("yaml.json", "openapi: 3.1.0\n"), 1, "yaml.json"},
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
