package openapi

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// Validator validates documents against the components as the OpenAPI
// document states them, compiled as JSON Schema 2020-12 (the dialect of
// OpenAPI 3.1, whose own keywords such as discriminator only annotate) with
// format assertions on, like package schemas. It is how the tests show that
// the document and the validator accept and reject the same documents.
type Validator struct {
	schemas map[string]*jsonschema.Schema
}

// Compile compiles every component.
func Compile(comps []Component) (*Validator, error) {
	const url = "urn:tcmkit:openapi"
	raw := jsondoc.Encode(jsondoc.NewObj("components", jsondoc.NewObj("schemas", Schemas(comps))))
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	v := &Validator{schemas: map[string]*jsonschema.Schema{}}
	for _, comp := range comps {
		s, err := c.Compile(url + Ref(comp.Name))
		if err != nil {
			return nil, fmt.Errorf("openapi: compile %s: %w", comp.Name, err)
		}
		v.schemas[comp.Name] = s
	}
	return v, nil
}

// Validate checks a decoded document (as jsondoc.Decode makes it) against
// the component name; nil means the document accepts it.
func (v *Validator) Validate(name string, doc any) error {
	s, ok := v.schemas[name]
	if !ok {
		return fmt.Errorf("openapi: no component %q", name)
	}
	return s.Validate(doc)
}
