package simulator

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// controlDoc is controlapi.yaml, decoded, and compiled for validation.
type controlDoc struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
}

const controlDocURL = "urn:tcmkit:control-openapi"

func loadControlDoc(t *testing.T) *controlDoc {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(controlOpenAPI, &doc); err != nil {
		t.Fatalf("controlapi.yaml: %v", err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(controlDocURL, js); err != nil {
		t.Fatal(err)
	}
	return &controlDoc{doc: doc, compiler: c}
}

func (d *controlDoc) operations() map[string]map[string]any {
	out := map[string]map[string]any{}
	for path, item := range d.doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			out[strings.ToUpper(method)+" "+path] = op.(map[string]any)
		}
	}
	return out
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// check validates an answer of route (METHOD /path, as documented) against
// the document: its status must be documented, its JSON body must match.
func (d *controlDoc) check(t *testing.T, route string, r response) {
	t.Helper()
	op, ok := d.operations()[route]
	if !ok {
		t.Fatalf("%s is not documented", route)
	}
	status := strconv.Itoa(r.status)
	resp, ok := op["responses"].(map[string]any)[status].(map[string]any)
	if !ok {
		t.Errorf("%s answered %d, which the document does not list: %s", route, r.status, r.body)
		return
	}
	method, path, _ := strings.Cut(route, " ")
	ptr := "#/paths/" + pointerEscape(path) + "/" + strings.ToLower(method) + "/responses/" + status
	if ref, ok := resp["$ref"].(string); ok {
		ptr = ref
	}
	if r.header.Get("Content-Type") != "application/json" {
		return // the YAML document itself
	}
	s, err := d.compiler.Compile(controlDocURL + ptr + "/content/application~1json/schema")
	if err != nil {
		t.Fatalf("%s %d: %v", route, r.status, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("%s %d: %v", route, r.status, err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s %d does not match its document: %v\n%.300s", route, r.status, err, r.body)
	}
}

// The control API's OpenAPI document describes exactly the routes of the
// table, each method of each path.
func TestControlOpenAPIMatchesTheRoutes(t *testing.T) {
	d := loadControlDoc(t)
	ops := d.operations()
	for _, rt := range controlTable() {
		key := rt.Method + " /" + rt.Path
		if _, ok := ops[key]; !ok {
			t.Errorf("route %s is not in controlapi.yaml", key)
		}
		delete(ops, key)
	}
	for key := range ops {
		t.Errorf("controlapi.yaml documents %s, which is no route", key)
	}
}

// Every route answers as its document says, on success and on error.
func TestControlAnswersMatchTheirDocument(t *testing.T) {
	d := loadControlDoc(t)
	s := newServer(t, Config{Seed: 1, MaxAccounts: 4})
	var export bytes.Buffer
	if err := s.Export(&export); err != nil {
		t.Fatal(err)
	}
	s.serve(t, feedReq(s.Seeded().Pro, "limit=1"))
	exercised := map[string]bool{}
	for _, tc := range []struct {
		route, target, body string
		want                int
	}{
		{"GET /", "", "", 200},
		{"GET /openapi.yaml", "openapi.yaml", "", 200},
		{"GET /ui", "ui", "", 200},
		{"GET /info", "info", "", 200},
		{"GET /accounts", "accounts", "", 200},
		{"POST /accounts", "accounts", `{"plan":"free"}`, 201},
		{"POST /accounts", "accounts", `{"plan":"gold"}`, 400},
		{"POST /accounts", "accounts", `{"plan":"pro"}`, 409},
		{"PUT /accounts/{id}/plan", "accounts/acc_2/plan", `{"plan":"pro"}`, 200},
		{"PUT /accounts/{id}/plan", "accounts/nope/plan", `{"plan":"pro"}`, 404},
		{"POST /accounts/{id}/key", "accounts/acc_2/key", "", 200},
		{"POST /accounts/{id}/key", "accounts/nope/key", "", 404},
		{"GET /clock", "clock", "", 200},
		{"POST /clock/advance", "clock/advance", `{"duration":"1h"}`, 200},
		{"POST /clock/advance", "clock/advance", `{"duration":"soon"}`, 400},
		{"POST /poll", "poll", "", 200},
		{"POST /faults", "faults", `{"operation":"feed","status":503,"count":1}`, 201},
		{"POST /faults", "faults", `{"operation":"feed"}`, 400},
		{"GET /faults", "faults", "", 200},
		{"DELETE /faults", "faults", "", 200},
		{"PUT /edge-rate", "edge-rate", `{"rate":0.5}`, 200},
		{"PUT /edge-rate", "edge-rate", `{"rate":5}`, 400},
		{"GET /requests", "requests?operation=feed", "", 200},
		{"GET /requests", "requests?status=teapot", "", 400},
		{"GET /requests", "requests?keySuffix=fTwO", "", 400}, // no such filter: named, not ignored
		{"DELETE /requests", "requests", "", 200},
		{"GET /world", "world", "", 200},
		{"PUT /world", "world", export.String(), 200},
		{"PUT /world", "world", `{"format":"nope"}`, 400},
		{"POST /reset", "reset", "", 200},
		// Without a judge (Config.Clients); with one: clients_test.go.
		{"GET /clients", "clients", "", 404},
		{"GET /scenarios", "scenarios", "", 404},
		{"POST /scenarios", "scenarios", `{"name":"429-storm"}`, 404},
		{"DELETE /scenarios", "scenarios", "", 404},
		{"DELETE /clients", "clients", "", 404},
		{"GET /fuzz", "fuzz", "", 404}, // without a schedule; with one: package simulator/fuzz
	} {
		method, _, _ := strings.Cut(tc.route, " ")
		r := s.serve(t, ctl(method, tc.target, tc.body))
		if r.status != tc.want {
			t.Errorf("%s (%s): %d, want %d: %.200s", tc.route, tc.target, r.status, tc.want, r.body)
			continue
		}
		d.check(t, tc.route, r)
		exercised[tc.route] = true
	}
	// The guard's answers, on any route.
	r := s.serve(t, req{method: "POST", target: ControlPrefix + "accounts", body: `{"plan":"pro"}`, header: http.Header{"Content-Type": {"text/plain"}}})
	d.check(t, "POST /accounts", r)
	d.check(t, "GET /info", s.serveHost(t, "attacker.example", ctl("GET", "info", "")))
	tok := newServer(t, Config{Seed: 1, ControlToken: testToken})
	d.check(t, "GET /info", tok.serve(t, ctl("GET", "info", "")))
	var missing []string
	for _, rt := range controlTable() {
		if !exercised[rt.Method+" /"+rt.Path] {
			missing = append(missing, rt.Method+" /"+rt.Path)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("routes this test does not exercise: %v", missing)
	}
}

// TestControlSchemasUseOnlyKeywords: a schema in controlapi.yaml holds
// keywords only. A comma in an unquoted description of a flow mapping
// ({type: string, description: a, b}) makes a member of its own ("b"),
// which YAML accepts and Redocly's struct rule refuses.
func TestControlSchemasUseOnlyKeywords(t *testing.T) {
	keywords := map[string]bool{}
	for _, k := range strings.Fields(`type properties required items description enum const format minimum maximum
		minLength maxLength minItems maxItems additionalProperties oneOf anyOf allOf not $ref example examples
		nullable default pattern title discriminator uniqueItems propertyNames exclusiveMinimum exclusiveMaximum
		readOnly writeOnly deprecated multipleOf minProperties maxProperties patternProperties if then else contentMediaType`) {
		keywords[k] = true
	}
	var walk func(path string, v any, schema bool)
	walk = func(path string, v any, schema bool) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if schema && !keywords[k] {
					t.Errorf("%s: %q is no schema keyword (an unquoted comma in a description?)", path, k)
				}
				switch {
				case k == "schema" || k == "items" || k == "additionalProperties" || k == "not":
					walk(path+"/"+k, child, true)
				case k == "properties" && schema:
					if props, ok := child.(map[string]any); ok {
						for name, p := range props {
							walk(path+"/properties/"+name, p, true)
						}
					}
				case k == "schemas" && path == "/components":
					if ss, ok := child.(map[string]any); ok {
						for name, s := range ss {
							walk(path+"/schemas/"+name, s, true)
						}
					}
				case k == "oneOf" || k == "anyOf" || k == "allOf":
					if list, ok := child.([]any); ok {
						for i, s := range list {
							walk(path+"/"+k+"/"+strconv.Itoa(i), s, true)
						}
					}
				case !schema:
					walk(path+"/"+k, child, false)
				}
			}
		case []any:
			for i, child := range v {
				walk(path+"/"+strconv.Itoa(i), child, schema)
			}
		}
	}
	walk("", loadControlDoc(t).doc, false)
}
