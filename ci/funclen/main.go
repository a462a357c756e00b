// Command funclen fails when a Go function of the module is longer than
// -max lines (from its func line to its closing brace): a function that
// long is several, and a reader would name each part. CI runs it
// (ci/check.sh); -list prints every function over -list lines, longest
// first, without failing.
//
//	go run ./ci/funclen [-max 150] [-list N] [DIR]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// long is a function and its length in lines.
type long struct {
	where string // file:line
	name  string
	lines int
}

func main() {
	maxLines := flag.Int("max", 150, "fail when a function is longer than this many lines")
	list := flag.Int("list", 0, "print every function longer than this many lines, and do not fail")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	limit := *maxLines
	if *list > 0 {
		limit = *list
	}
	found, err := longer(root, limit)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	for _, l := range found {
		fmt.Printf("%4d lines  %s  %s\n", l.lines, l.where, l.name)
	}
	if *list == 0 && len(found) > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d function(s) over %d lines: split each where a reader would, each part named for what it does\n", len(found), *maxLines)
		os.Exit(1)
	}
}

// longer returns the functions under root longer than limit lines, longest
// first. Directories Go ignores (testdata, dot and underscore names) and
// node_modules are skipped.
func longer(root string, limit int) ([]long, error) {
	var out []long
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start := fset.Position(fn.Pos())
			if n := fset.Position(fn.End()).Line - start.Line + 1; n > limit {
				out = append(out, long{where: fmt.Sprintf("%s:%d", path, start.Line), name: funcName(fn), lines: n})
			}
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].lines > out[j].lines })
	return out, err
}

// funcName is a function's name, with its receiver's type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
