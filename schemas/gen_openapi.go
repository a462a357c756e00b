//go:build ignore

// gen_openapi rewrites the schema components of openapi.yaml from the
// schema files (see package schemas/openapi). Run it with go generate.
package main

import (
	"log"
	"os"

	"github.com/tcmkit/tcmkit/schemas/openapi"
)

func main() {
	doc, err := os.ReadFile("openapi.yaml")
	if err != nil {
		log.Fatal(err)
	}
	out, err := openapi.Update(doc, os.DirFS("."))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("openapi.yaml", out, 0o644); err != nil {
		log.Fatal(err)
	}
}
