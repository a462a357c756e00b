//go:build ignore

// gen_contract writes CONTRACT.md, the catalogue as a document (the
// contract in the kit's words), from requirements.json and the numbers of
// schemas/contract.go, and the ledger from ledger.json. Run it with go
// generate.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

func main() {
	doc, err := catalogue.Document() // go run builds the package anew: the embedded files are the ones just edited
	if err == nil {
		err = os.WriteFile(filepath.Base(catalogue.DocPath), doc, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen_contract:", err)
		os.Exit(1)
	}
}
