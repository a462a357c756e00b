// Package openapi builds the schema components of schemas/openapi.yaml from
// the schema files of package schemas, so that the document and the
// validator read every rule from one place.
//
// The schema files are written for the validator: they carry $id, refer to
// each other by relative $ref, and select an event type's definition with
// if/then so that an error names the type and the field. Code generators
// and proxies understand little of that, so the document gets a translation
// that says the same thing in the forms they understand:
//
//   - one component per schema file, named by the file's title, with no $id
//     and every reference local (#/components/schemas/Name);
//   - the definitions of common.json inlined where they are used (a
//     timestamp, a count, a URI), with the user's description kept;
//   - a $ref with sibling assertions (VideoSummary is VideoStats plus
//     channel) as an allOf of the reference and the rest;
//   - Event as a oneOf of one component per event type (VideoPublishedEvent,
//     ...) with a discriminator on type; each carries the common fields and
//     those of its type, and type restricted to its one value.
//
// Anything else the translation does not know is an error, so a new
// construct in a schema file fails `go generate` instead of slipping
// through. The tests in this package prove that the components accept and
// reject the same documents as the validator on the whole fixture corpus,
// and that the committed document is what the generator writes.
package openapi

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// Component is one schema of components/schemas.
type Component struct {
	// Name is its key under components/schemas, such as "FeedPage" or
	// "TitleChangedEvent".
	Name string
	// Resource is the schema file it is built from.
	Resource schemas.Resource
	// EventType is the event type of an event component, "" otherwise.
	EventType string
	// Schema is the schema, ready to be written into the document.
	Schema *jsondoc.Obj
}

// Ref is the local reference to a component.
func Ref(name string) string { return "#/components/schemas/" + name }

// common is the file whose $defs are inlined rather than named.
const common = "common.json"

// EventComponentName is the name of the component of an event type:
// title_ab_test becomes TitleABTestEvent.
func EventComponentName(eventType string) string {
	var b strings.Builder
	for _, w := range strings.Split(eventType, "_") {
		if w == "ab" {
			b.WriteString("AB")
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String() + "Event"
}

// Build reads the schema files of fsys (the files of package schemas) and
// returns the components in the order of the spec: the resources of
// schemas.Resources, each event type's component after Event.
func Build(fsys fs.FS) ([]Component, error) {
	files := map[string]*jsondoc.Obj{}
	titles := map[string]string{}
	for _, name := range append([]string{common}, resourceNames()...) {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("openapi: %w", err)
		}
		doc, err := jsondoc.DecodeOrdered(raw)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", name, err)
		}
		obj, ok := doc.(*jsondoc.Obj)
		if !ok {
			return nil, fmt.Errorf("openapi: %s: not a JSON object", name)
		}
		files[name] = obj
		if name != common {
			title, _ := obj.Get("title")
			t, ok := title.(string)
			if !ok || t == "" {
				return nil, fmt.Errorf("openapi: %s: no title to name its component by", name)
			}
			titles[name] = t
		}
	}
	defs, _ := files[common].Get("$defs")
	commonDefs, ok := defs.(*jsondoc.Obj)
	if !ok {
		return nil, fmt.Errorf("openapi: %s: no $defs", common)
	}
	t := translator{titles: titles, common: commonDefs}

	var out []Component
	for _, r := range schemas.Resources {
		file := string(r)
		if r == schemas.Event {
			comps, err := t.event(files[file])
			if err != nil {
				return nil, fmt.Errorf("openapi: %s: %w", file, err)
			}
			out = append(out, comps...)
			continue
		}
		s, err := t.root(files[file])
		if err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", file, err)
		}
		out = append(out, Component{Name: titles[file], Resource: r, Schema: s})
	}
	return out, nil
}

func resourceNames() []string {
	names := make([]string, len(schemas.Resources))
	for i, r := range schemas.Resources {
		names[i] = string(r)
	}
	return names
}

// Schemas is components/schemas: every component by name, in order.
func Schemas(comps []Component) *jsondoc.Obj {
	o := jsondoc.NewObj()
	for _, c := range comps {
		o.Set(c.Name, c.Schema)
	}
	return o
}

type translator struct {
	titles map[string]string // schema file -> component name
	common *jsondoc.Obj      // the $defs of common.json
}

// Keywords that only annotate: they may sit beside a $ref without changing
// what it accepts. $comment is for the maintainers of the schema files and
// stays there.
var annotations = []string{"title", "description", "$comment", "deprecated", "readOnly", "writeOnly", "examples", "default"}

// Keywords whose value is a schema, a map of schemas or a list of schemas.
var (
	schemaValued = []string{"items", "not", "if", "then", "else", "additionalProperties", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"}
	schemaMaps   = []string{"properties", "patternProperties", "dependentSchemas"}
	schemaLists  = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	// Keywords of a file's root that identify the file, not the schema.
	fileOnly = []string{"$schema", "$id"}
)

// root translates a whole schema file.
func (t translator) root(file *jsondoc.Obj) (*jsondoc.Obj, error) {
	s := jsondoc.NewObj()
	for _, k := range file.Keys() {
		if !slices.Contains(fileOnly, k) {
			v, _ := file.Get(k)
			s.Set(k, v)
		}
	}
	if _, ok := s.Get("$defs"); ok {
		return nil, errors.New("$defs outside common.json and event.json: name the schema in a file of its own")
	}
	return t.schema(s, "")
}

// schema translates one schema; at is its JSON pointer, for errors.
func (t translator) schema(s any, at string) (*jsondoc.Obj, error) {
	in, ok := s.(*jsondoc.Obj)
	if !ok {
		return nil, fmt.Errorf("%s: a schema that is not an object (%s)", orRoot(at), jsondoc.Encode(s))
	}
	if _, ok := in.Get("$ref"); ok {
		return t.ref(in, at)
	}
	out := jsondoc.NewObj()
	for _, k := range in.Keys() {
		v, _ := in.Get(k)
		switch {
		case k == "$comment":
			continue
		case k == "$defs" || slices.Contains(fileOnly, k):
			return nil, fmt.Errorf("%s: %s inside a schema", orRoot(at), k)
		case slices.Contains(schemaValued, k):
			x, err := t.schema(v, at+"/"+k)
			if err != nil {
				return nil, err
			}
			out.Set(k, x)
		case slices.Contains(schemaMaps, k):
			m, ok := v.(*jsondoc.Obj)
			if !ok {
				return nil, fmt.Errorf("%s/%s: not an object", at, k)
			}
			x := jsondoc.NewObj()
			for _, name := range m.Keys() {
				sub, _ := m.Get(name)
				y, err := t.schema(sub, jsondoc.Join(at, k, name))
				if err != nil {
					return nil, err
				}
				x.Set(name, y)
			}
			out.Set(k, x)
		case slices.Contains(schemaLists, k):
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("%s/%s: not an array", at, k)
			}
			x := make([]any, len(list))
			for i, sub := range list {
				y, err := t.schema(sub, jsondoc.Join(at, k, i))
				if err != nil {
					return nil, err
				}
				x[i] = y
			}
			out.Set(k, x)
		default:
			out.Set(k, v)
		}
	}
	return out, nil
}

// ref translates a schema with a $ref: to another file, a local component
// reference (with its other assertions, if any, as an allOf beside it); to
// common.json, the definition inlined.
func (t translator) ref(in *jsondoc.Obj, at string) (*jsondoc.Obj, error) {
	rv, _ := in.Get("$ref")
	ref, _ := rv.(string)
	file, frag, _ := strings.Cut(ref, "#")
	notes, rest := jsondoc.NewObj(), jsondoc.NewObj()
	for _, k := range in.Keys() {
		v, _ := in.Get(k)
		switch {
		case k == "$ref" || k == "$comment":
		case slices.Contains(annotations, k):
			notes.Set(k, v)
		default:
			rest.Set(k, v)
		}
	}
	if file == common {
		name, ok := strings.CutPrefix(frag, "/$defs/")
		def, found := t.common.Get(name)
		if !ok || !found {
			return nil, fmt.Errorf("%s: $ref %q names no definition of %s", orRoot(at), ref, common)
		}
		if len(rest.Keys()) > 0 {
			return nil, fmt.Errorf("%s: $ref %q has assertions beside it (%s): say them in %s", orRoot(at), ref, strings.Join(rest.Keys(), ", "), common)
		}
		out, err := t.schema(def, at)
		if err != nil {
			return nil, fmt.Errorf("%s#%s: %w", common, frag, err)
		}
		// The user's annotations win over the definition's.
		for _, k := range notes.Keys() {
			v, _ := notes.Get(k)
			out.Set(k, v)
		}
		return reorder(out), nil
	}
	name, ok := t.titles[file]
	if !ok || frag != "" {
		return nil, fmt.Errorf("%s: $ref %q is neither a schema file nor a definition of %s", orRoot(at), ref, common)
	}
	target := jsondoc.NewObj("$ref", Ref(name))
	if len(rest.Keys()) == 0 {
		for _, k := range notes.Keys() {
			v, _ := notes.Get(k)
			target.Set(k, v)
		}
		return target, nil
	}
	more, err := t.schema(rest, at)
	if err != nil {
		return nil, err
	}
	notes.Set("allOf", []any{target, more})
	return notes, nil
}

// reorder puts the annotations first, as the schema files do.
func reorder(o *jsondoc.Obj) *jsondoc.Obj {
	out := jsondoc.NewObj()
	for _, pass := range []bool{true, false} {
		for _, k := range o.Keys() {
			if slices.Contains(annotations, k) == pass {
				v, _ := o.Get(k)
				out.Set(k, v)
			}
		}
	}
	return out
}

// event translates event.json: Event becomes a oneOf of one component per
// type, discriminated by type. It checks that the file has the shape it
// translates: common fields, the type enum, one if/then per type that
// selects the type's definition, and one definition per type.
func (t translator) event(file *jsondoc.Obj) ([]Component, error) {
	var (
		required []any
		props    *jsondoc.Obj
		branches []any
		defs     *jsondoc.Obj
		event    = jsondoc.NewObj()
	)
	for _, k := range file.Keys() {
		v, _ := file.Get(k)
		var ok bool
		switch k {
		case "$schema", "$id", "$comment":
			ok = true
		case "title", "description":
			event.Set(k, v)
			ok = true
		case "type":
			ok = v == "object"
		case "required":
			required, ok = v.([]any)
		case "properties":
			props, ok = v.(*jsondoc.Obj)
		case "allOf":
			branches, ok = v.([]any)
		case "$defs":
			defs, ok = v.(*jsondoc.Obj)
		}
		if !ok {
			return nil, fmt.Errorf("/%s: not translated: the generator knows event.json as common fields, an enum of types, if/then per type and $defs per type", k)
		}
	}
	if props == nil || defs == nil {
		return nil, errors.New("no properties or no $defs")
	}
	typeProp, _ := props.Get("type")
	tp, _ := typeProp.(*jsondoc.Obj)
	var enum []any
	if tp != nil {
		e, _ := tp.Get("enum")
		enum, _ = e.([]any)
	}
	if len(enum) == 0 || len(tp.Keys()) != 1 {
		return nil, errors.New("/properties/type: want exactly an enum of the event types")
	}
	var types []string
	for _, e := range enum {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("/properties/type/enum: %v is not a string", e)
		}
		types = append(types, s)
	}
	selected, err := branchTypes(branches)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(selected, types) {
		return nil, fmt.Errorf("/allOf selects %v, want one if/then per type of the enum, in its order: %v", selected, types)
	}
	if !slices.Equal(defs.Keys(), types) {
		return nil, fmt.Errorf("/$defs defines %v, want one definition per type, in the order of the enum: %v", defs.Keys(), types)
	}

	comps := []Component{{Name: "Event", Resource: schemas.Event, Schema: event}}
	oneOf := make([]any, 0, len(types))
	mapping := jsondoc.NewObj()
	for _, typ := range types {
		name := EventComponentName(typ)
		def, _ := defs.Get(typ)
		s, err := t.eventType(typ, name, required, props, def)
		if err != nil {
			return nil, fmt.Errorf("/$defs/%s: %w", typ, err)
		}
		comps = append(comps, Component{Name: name, Resource: schemas.Event, EventType: typ, Schema: s})
		oneOf = append(oneOf, jsondoc.NewObj("$ref", Ref(name)))
		mapping.Set(typ, Ref(name))
	}
	event.Set("oneOf", oneOf)
	event.Set("discriminator", jsondoc.NewObj("propertyName", "type", "mapping", mapping))
	return comps, nil
}

// branchTypes reads the type each if/then of event.json's allOf selects,
// checking that each is exactly
// {"if": {"required": ["type"], "properties": {"type": {"const": T}}}, "then": {"$ref": "#/$defs/T"}}.
func branchTypes(branches []any) ([]string, error) {
	var types []string
	for i, b := range branches {
		want := func(typ string) string {
			return `{"if":{"required":["type"],"properties":{"type":{"const":"` + typ + `"}}},"then":{"$ref":"#/$defs/` + typ + `"}}`
		}
		typ, _ := jsondoc.String(b, "/if/properties/type/const")
		if typ == "" || string(jsondoc.Encode(b)) != want(typ) {
			return nil, fmt.Errorf("/allOf/%d: not translated: want %s", i, want("TYPE"))
		}
		types = append(types, typ)
	}
	return types, nil
}

// eventType builds the component of one event type: the common fields of
// every event, type restricted to its one value, and the fields of the
// type's definition.
func (t translator) eventType(typ, name string, required []any, common *jsondoc.Obj, def any) (*jsondoc.Obj, error) {
	d, ok := def.(*jsondoc.Obj)
	if !ok {
		return nil, errors.New("not an object")
	}
	s := jsondoc.NewObj("title", name)
	if desc, ok := d.Get("description"); ok {
		s.Set("description", desc)
	}
	s.Set("type", "object")
	req := slices.Clone(required)
	props := jsondoc.NewObj()
	for _, k := range common.Keys() {
		if k == "type" {
			props.Set(k, jsondoc.NewObj("type", "string", "enum", []any{typ}))
			continue
		}
		v, _ := common.Get(k)
		x, err := t.schema(v, "/properties/"+k)
		if err != nil {
			return nil, err
		}
		props.Set(k, x)
	}
	for _, k := range d.Keys() {
		v, _ := d.Get(k)
		switch k {
		case "description", "$comment":
		case "required":
			list, ok := v.([]any)
			if !ok {
				return nil, errors.New("/required: not an array")
			}
			for _, f := range list {
				if !slices.Contains(req, f) {
					req = append(req, f)
				}
			}
		case "properties":
			m, ok := v.(*jsondoc.Obj)
			if !ok {
				return nil, errors.New("/properties: not an object")
			}
			for _, p := range m.Keys() {
				if _, dup := props.Get(p); dup {
					return nil, fmt.Errorf("/properties/%s: also a field of every event; a type may add fields, not redefine them", p)
				}
				sub, _ := m.Get(p)
				x, err := t.schema(sub, "/properties/"+p)
				if err != nil {
					return nil, err
				}
				props.Set(p, x)
			}
		default:
			return nil, fmt.Errorf("/%s: not translated: an event type's definition has description, required and properties", k)
		}
	}
	s.Set("required", req)
	s.Set("properties", props)
	return s, nil
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}
