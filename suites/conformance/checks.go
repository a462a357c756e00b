package conformance

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/oracle"
)

// finding is one broken rule in one response.
type finding struct {
	req  string // the request, named
	ptr  string // the JSON pointer, for the order of findings
	kind string // the rule broken, for grouping: findings of one kind are counted past maxFindings
	line string // pointer, rule and value
	// blame is the requirement the finding breaks; "" is the spec's own.
	blame catalogue.ID
}

// schemaFinding is a finding of one schema violation in an answer that
// must be res.
func schemaFinding(req string, res schemas.Resource, v schemas.Violation) finding {
	kind := "[" + v.Keyword + "] " + v.Rule
	if v.EventType != "" {
		kind += " (" + v.EventType + ")"
	}
	return finding{req: req, ptr: v.Pointer, kind: kind, line: v.String(), blame: oracle.ViolationRequirement(res, v)}
}

// maxFindings is how many findings of one kind a failure message lists;
// the rest are counted. maxKinds bounds the kinds listed.
const (
	maxFindings = 20
	maxKinds    = 20
)

// describeFindings renders findings for a failure message: the rule, the
// count, then each kind of finding with its first maxFindings, request by
// request in the order they were sent and by JSON pointer in numeric
// order, and the count of the rest.
func describeFindings(rule string, fs []finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%d finding(s):", rule, len(fs))
	writeFindings(&b, fs, "  ")
	return b.String()
}

// writeFindings writes findings grouped by kind, as describeFindings says.
func writeFindings(b *strings.Builder, fs []finding, indent string) {
	order := map[string]int{} // a request's place: the order it first appears
	var kinds []string
	byKind := map[string][]finding{}
	for _, f := range fs {
		if _, ok := order[f.req]; !ok {
			order[f.req] = len(order)
		}
		if _, ok := byKind[f.kind]; !ok {
			kinds = append(kinds, f.kind)
		}
		byKind[f.kind] = append(byKind[f.kind], f)
	}
	grouped := len(kinds) > 1
	for k, kind := range kinds {
		group := byKind[kind]
		if k == maxKinds {
			rest := 0
			for _, kind := range kinds[k:] {
				rest += len(byKind[kind])
			}
			fmt.Fprintf(b, "\n%s… and %d more finding(s) of %d other kind(s)", indent, rest, len(kinds)-k)
			return
		}
		group = first(group, maxFindings, func(a, b finding) int {
			if c := order[a.req] - order[b.req]; c != 0 {
				return c
			}
			return jsondoc.ComparePointers(a.ptr, b.ptr)
		})
		in := indent
		if grouped {
			fmt.Fprintf(b, "\n%s%s: %d finding(s)", indent, jsondoc.Excerpt(kind, 200), len(byKind[kind]))
			in += "  "
		}
		last := ""
		for i, f := range group {
			if i == maxFindings {
				fmt.Fprintf(b, "\n%s… and %d more of this kind", in, len(byKind[kind])-maxFindings)
				break
			}
			if f.req != last {
				fmt.Fprintf(b, "\n%s%s:", in, f.req)
				last = f.req
			}
			fmt.Fprintf(b, "\n%s  %s", in, f.line)
		}
	}
}

// first returns the n smallest items in order (all of them, sorted, when
// there are fewer), without sorting the rest; the item after them stands
// for the rest, so that a caller can tell there are more.
func first[T any](items []T, n int, cmp func(a, b T) int) []T {
	if len(items) <= n {
		slices.SortStableFunc(items, cmp)
		return items
	}
	best := make([]T, 0, n+1)
	for _, it := range items {
		if len(best) == n && cmp(it, best[n-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, it, func(a, b T) int {
			if c := cmp(a, b); c != 0 {
				return c
			}
			return -1 // after its equals: stable
		})
		best = slices.Insert(best, i, it)
		if len(best) > n {
			best = best[:n]
		}
	}
	return append(best, items[0]) // a stand-in for the rest
}

// listProblems renders plain problems, at most maxFindings of them and the
// count of the rest.
func listProblems(problems []string, indent string) string {
	shown := problems[:min(len(problems), maxFindings)]
	s := indent + strings.Join(shown, "\n"+indent)
	if rest := len(problems) - len(shown); rest > 0 {
		s += fmt.Sprintf("\n%s… and %d more", indent, rest)
	}
	return s
}

// natural orders texts with numbers in them by the numbers' values:
// /videos/2 before /videos/10.
func natural(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
