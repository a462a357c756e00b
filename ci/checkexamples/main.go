// Command checkexamples validates every example of the OpenAPI document
// against the schema it illustrates, so that no example contradicts either
// the document or the schemas the suite judges servers by:
//
//	go run ./ci/checkexamples schemas/openapi.yaml
//
// Checked: the examples of every media type (request and response bodies),
// parameter and header. Each is validated twice: against its schema as the
// document states it (compiled from the document itself, as Redocly and
// Prism read it), and, when the schema is one of the components generated
// from the schema files, with package schemas (the validator the suite and
// the simulator use). Format assertions are on in both. Every media type
// must carry at least one example.
//
// It also checks that what the document must restate of
// schemas/contract.go agrees with it: info.version, the three paths, the
// default of limit, and the cap of limit, which is described rather than
// declared as maximum (larger values are capped, not rejected).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/openapi"
)

func main() {
	if len(os.Args) != 2 || strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprintln(os.Stderr, "usage: checkexamples OPENAPI.yaml  (YAML or JSON; see ci/check-examples.sh)")
		os.Exit(2)
	}
	os.Exit(run(os.Stdout, os.Args[1]))
}

func run(out io.Writer, path string) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(out, "checkexamples:", err)
		return 1
	}
	doc, err := decodeYAML(raw)
	if err != nil {
		fmt.Fprintf(out, "checkexamples: %s: %v\n", path, err)
		return 1
	}
	root, ok := doc.(map[string]any)
	if !ok {
		fmt.Fprintf(out, "checkexamples: %s: not a JSON object\n", path)
		return 1
	}
	checked, problems := Check(root)
	problems = append(problems, CheckContract(root)...)
	for _, p := range problems {
		fmt.Fprintln(out, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(out, "openapi examples: %d checked, %d problem(s)\n", checked, len(problems))
		return 1
	}
	fmt.Fprintf(out, "openapi examples: all %d valid against their schemas; version, paths and limit agree with schemas/contract.go\n", checked)
	return 0
}

// decodeYAML reads a YAML (or JSON) document into the tree jsondoc reads:
// objects as map[string]any, numbers as json.Number.
func decodeYAML(raw []byte) (any, error) {
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return jsondoc.Decode(j)
}

// Problem is an example that does not validate, or a place that cannot be
// checked as it stands.
type Problem struct {
	// Where is the JSON pointer of the example (or of the object lacking one).
	Where string
	// Schema names what the example was checked against.
	Schema string
	Err    error
}

func (p Problem) String() string {
	if p.Schema == "" {
		return fmt.Sprintf("%s: %v", p.Where, p.Err)
	}
	return fmt.Sprintf("%s (schema %s): %v", p.Where, p.Schema, p.Err)
}

// CheckContract reports where the document disagrees with the numbers,
// paths and version named in schemas/contract.go.
func CheckContract(doc map[string]any) []Problem {
	var problems []Problem
	fail := func(where string, format string, args ...any) {
		problems = append(problems, Problem{Where: where, Schema: "contract.go", Err: fmt.Errorf(format, args...)})
	}
	if v, _ := get(doc, "info", "version").(string); v != schemas.APIVersion {
		fail("/info/version", "is %q, want schemas.APIVersion %q", v, schemas.APIVersion)
	}
	paths, _ := doc["paths"].(map[string]any)
	want := []string{schemas.PathFeed, schemas.PathHealth, schemas.PathVideos}
	if got := sortedKeys(paths); !slices.Equal(got, want) {
		fail("/paths", "has %q, want exactly %q", got, want)
	}
	limit, err := findParam(doc, schemas.PathFeed, "get", "limit")
	if err != nil {
		fail("/paths/"+escape(schemas.PathFeed)+"/get/parameters", "%v", err)
		return problems
	}
	if d := fmt.Sprint(get(limit, "schema", "default")); d != strconv.Itoa(schemas.DefaultPageSize) {
		fail("limit parameter schema/default", "is %s, want schemas.DefaultPageSize %d", d, schemas.DefaultPageSize)
	}
	if m := get(limit, "schema", "maximum"); m != nil {
		fail("limit parameter schema/maximum", "is %v: larger values are capped, not rejected, so no maximum may be declared", m)
	}
	capped := "capped at " + strconv.Itoa(schemas.MaxPageSize)
	if d, _ := limit["description"].(string); !strings.Contains(strings.Join(strings.Fields(d), " "), capped) {
		fail("limit parameter description", "does not say %q", capped)
	}
	return problems
}

// findParam returns the (resolved) query parameter name of an operation.
func findParam(doc map[string]any, path, method, name string) (map[string]any, error) {
	c := checker{doc: doc}
	params, _ := get(doc, "paths", path, method, "parameters").([]any)
	for _, p := range params {
		r, err := c.resolve(p)
		if err != nil {
			return nil, err
		}
		if obj, ok := r.(map[string]any); ok && obj["name"] == name && obj["in"] == "query" {
			return obj, nil
		}
	}
	return nil, fmt.Errorf("%s %s has no query parameter %q", method, path, name)
}

// get walks nested objects by key; nil where a key is missing.
func get(node any, keys ...string) any {
	for _, k := range keys {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[k]
	}
	return node
}

// Check validates every example of an OpenAPI document. It returns how
// many examples it validated and what is wrong, sorted by location.
func Check(doc map[string]any) (checked int, problems []Problem) {
	c := checker{doc: doc}
	if err := c.prepare(); err != nil {
		return 0, []Problem{{Where: "/", Err: err}}
	}
	c.walk(doc, nil)
	slices.SortStableFunc(c.problems, func(a, b Problem) int { return strings.Compare(a.Where, b.Where) })
	return c.checked, c.problems
}

type checker struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	// generated maps the components built from the schema files to them.
	generated map[string]openapi.Component
	checked   int
	problems  []Problem
}

// documentURL names the document as a JSON Schema resource, so that a
// schema anywhere in it compiles with its local $refs.
const documentURL = "urn:tcmkit:openapi-document"

func (c *checker) prepare() error {
	comps, err := openapi.Build(schemas.FS())
	if err != nil {
		return err
	}
	c.generated = map[string]openapi.Component{}
	for _, comp := range comps {
		c.generated[comp.Name] = comp
	}
	c.compiler = jsonschema.NewCompiler()
	c.compiler.DefaultDraft(jsonschema.Draft2020)
	c.compiler.AssertFormat()
	return c.compiler.AddResource(documentURL, c.doc)
}

func (c *checker) fail(where []string, schema string, err error) {
	c.problems = append(c.problems, Problem{Where: pointer(where), Schema: schema, Err: err})
}

// walk visits every object of the document except the schemas themselves,
// where "examples" is a JSON Schema keyword rather than an OpenAPI one.
func (c *checker) walk(node any, path []string) {
	switch v := node.(type) {
	case map[string]any:
		if len(path) == 2 && path[0] == "components" && path[1] == "schemas" {
			return
		}
		isMedia := len(path) >= 2 && path[len(path)-2] == "content"
		_, hasSchema := v["schema"]
		_, hasExample := v["example"]
		_, hasExamples := v["examples"]
		if isMedia && !hasExample && !hasExamples {
			c.fail(path, "", errors.New("media type has no example"))
		}
		if hasSchema && (hasExample || hasExamples) {
			c.checkExamples(v, path)
		}
		for _, k := range sortedKeys(v) {
			if k == "schema" || k == "example" || k == "examples" {
				continue
			}
			c.walk(v[k], append(slices.Clip(path), k))
		}
	case []any:
		for i, e := range v {
			c.walk(e, append(slices.Clip(path), fmt.Sprint(i)))
		}
	}
}

// checkExamples validates the example and examples of a media type,
// parameter or header object against its schema.
func (c *checker) checkExamples(obj map[string]any, path []string) {
	validate, name, err := c.validator(obj["schema"], append(slices.Clip(path), "schema"))
	if err != nil {
		c.fail(append(slices.Clip(path), "schema"), "", err)
		return
	}
	if ex, ok := obj["example"]; ok {
		c.checked++
		if err := validate(ex); err != nil {
			c.fail(append(slices.Clip(path), "example"), name, err)
		}
	}
	examples, ok := obj["examples"].(map[string]any)
	if _, present := obj["examples"]; present && !ok {
		c.fail(append(slices.Clip(path), "examples"), "", errors.New("examples is not a map of Example Objects"))
		return
	}
	for _, k := range sortedKeys(examples) {
		where := append(slices.Clip(path), "examples", k)
		ex, err := c.resolve(examples[k])
		if err != nil {
			c.fail(where, "", err)
			continue
		}
		exObj, ok := ex.(map[string]any)
		if !ok {
			c.fail(where, "", errors.New("not an Example Object"))
			continue
		}
		if _, ext := exObj["externalValue"]; ext {
			c.fail(where, name, errors.New("externalValue is not checked: put the example inline as value"))
			continue
		}
		value, ok := exObj["value"]
		if !ok {
			c.fail(where, name, errors.New("Example Object has no value"))
			continue
		}
		c.checked++
		if err := validate(value); err != nil {
			c.fail(append(where, "value"), name, err)
		}
	}
}

// validator returns the function that validates an instance against the
// schema at path: the document's schema compiled, and for a component
// generated from a schema file, package schemas too.
func (c *checker) validator(schemaNode any, path []string) (func(any) error, string, error) {
	obj, ok := schemaNode.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("schema is %T, want an object", schemaNode)
	}
	name := "inline"
	var resource schemas.Resource
	if ref, ok := obj["$ref"].(string); ok {
		comp, found := strings.CutPrefix(ref, "#/components/schemas/")
		gen, generated := c.generated[comp]
		if !found || !generated {
			return nil, "", fmt.Errorf("$ref %q is none of the components generated from the schema files", ref)
		}
		name, resource = comp, gen.Resource
	}
	sch, err := c.compiler.Compile(documentURL + "#" + pointer(path))
	if err != nil {
		return nil, "", fmt.Errorf("schema: %w", err)
	}
	return func(v any) error {
		if resource != "" {
			if err := schemas.Validate(resource, v); err != nil {
				return err
			}
		}
		if err := sch.Validate(v); err != nil {
			return fmt.Errorf("the document's schema: %w", err)
		}
		return nil
	}, name, nil
}

// resolve follows local $refs ("#/components/...") to the object they name.
func (c *checker) resolve(node any) (any, error) {
	for range 32 {
		obj, ok := node.(map[string]any)
		if !ok {
			return node, nil
		}
		ref, ok := obj["$ref"].(string)
		if !ok {
			return node, nil
		}
		target, err := lookup(c.doc, ref)
		if err != nil {
			return nil, err
		}
		node = target
	}
	return nil, errors.New("$ref chain longer than 32")
}

func lookup(doc map[string]any, ref string) (any, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q is not local to the bundle", ref)
	}
	var cur any = doc
	if frag == "" {
		return cur, nil
	}
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: no object at %q", ref, tok)
		}
		if cur, ok = m[tok]; !ok {
			return nil, fmt.Errorf("$ref %q: %q not found", ref, tok)
		}
	}
	return cur, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func pointer(path []string) string {
	var b strings.Builder
	for _, tok := range path {
		b.WriteByte('/')
		b.WriteString(escape(tok))
	}
	return b.String()
}

func escape(tok string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok) }
