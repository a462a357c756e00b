//go:build ignore

// gen_contract writes CONTRACT.md, the catalogue as a document (the
// contract in the kit's words), from requirements.json and the numbers of
// schemas/contract.go. Run it with go generate.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

func main() {
	c, err := catalogue.Load() // go run builds the package anew: the embedded file is the one just edited
	if err == nil {
		err = os.WriteFile(filepath.Base(catalogue.DocPath), c.ContractDoc(), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen_contract:", err)
		os.Exit(1)
	}
}
