package jsondoc

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

var (
	escaper   = strings.NewReplacer("~", "~0", "/", "~1")
	unescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// Pointer joins reference tokens into a JSON pointer, escaping ~ and /.
func Pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escaper.Replace(t))
	}
	return b.String()
}

// Join appends reference tokens to a pointer.
func Join(ptr string, tokens ...any) string {
	for _, t := range tokens {
		switch t := t.(type) {
		case int:
			ptr += "/" + strconv.Itoa(t)
		default:
			ptr += "/" + escaper.Replace(fmt.Sprint(t))
		}
	}
	return ptr
}

// Tokens splits a pointer into its reference tokens, unescaped; "" is the root.
func Tokens(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		parts[i] = unescaper.Replace(p)
	}
	return parts
}

// Last is the last reference token of a pointer, unescaped.
func Last(ptr string) string {
	return unescaper.Replace(ptr[strings.LastIndexByte(ptr, '/')+1:])
}

// child is the member or item tok of a container, if there is one.
func child(v any, tok string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		x, ok := c[tok]
		return x, ok
	case *Obj:
		return c.Get(tok)
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(c) || tok != strconv.Itoa(i) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

// Get returns the value at ptr, and whether there is one.
func Get(doc any, ptr string) (any, bool) {
	cur := doc
	for _, tok := range Tokens(ptr) {
		var ok bool
		if cur, ok = child(cur, tok); !ok {
			return nil, false
		}
	}
	return cur, true
}

// Set puts v at ptr: it replaces a member or an item, or adds a member to
// an object. It returns the root, which is v itself when ptr is "".
func Set(doc any, ptr string, v any) (any, error) {
	if ptr == "" {
		return v, nil
	}
	i := strings.LastIndexByte(ptr, '/')
	parent, ok := Get(doc, ptr[:i])
	if !ok {
		return doc, fmt.Errorf("jsondoc: %s: no container at %q", ptr, ptr[:i])
	}
	tok := unescaper.Replace(ptr[i+1:])
	switch p := parent.(type) {
	case map[string]any:
		p[tok] = v
	case *Obj:
		p.Set(tok, v)
	case []any:
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 || n >= len(p) {
			return doc, fmt.Errorf("jsondoc: %s: no item %q", ptr, tok)
		}
		p[n] = v
	default:
		return doc, fmt.Errorf("jsondoc: %s: %q is not a container", ptr, ptr[:i])
	}
	return doc, nil
}

// Delete removes the member at ptr from its object; it reports whether
// there was one.
func Delete(doc any, ptr string) bool {
	i := strings.LastIndexByte(ptr, '/')
	if i < 0 {
		return false
	}
	parent, _ := Get(doc, ptr[:i])
	tok := unescaper.Replace(ptr[i+1:])
	switch p := parent.(type) {
	case map[string]any:
		_, ok := p[tok]
		delete(p, tok)
		return ok
	case *Obj:
		return p.Del(tok)
	}
	return false
}

// Walk calls fn for every value below doc (the root not included) with its
// pointer, depth first: object members in key order (*Obj in its own
// order), array items in index order.
func Walk(doc any, fn func(ptr string, v any)) { walk(doc, "", fn) }

func walk(v any, ptr string, fn func(ptr string, v any)) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := ptr + "/" + escaper.Replace(k)
			fn(p, t[k])
			walk(t[k], p, fn)
		}
	case *Obj:
		for i, k := range t.keys {
			p := ptr + "/" + escaper.Replace(k)
			fn(p, t.vals[i])
			walk(t.vals[i], p, fn)
		}
	case []any:
		for i, x := range t {
			p := ptr + "/" + strconv.Itoa(i)
			fn(p, x)
			walk(x, p, fn)
		}
	}
}

// ComparePointers orders pointers token by token, array indexes by number:
// /events/2 before /events/10.
func ComparePointers(a, b string) int {
	ta, tb := Tokens(a), Tokens(b)
	for i := range min(len(ta), len(tb)) {
		if ta[i] == tb[i] {
			continue
		}
		na, ea := strconv.Atoi(ta[i])
		nb, eb := strconv.Atoi(tb[i])
		if ea == nil && eb == nil {
			return cmp.Compare(na, nb)
		}
		return strings.Compare(ta[i], tb[i])
	}
	return cmp.Compare(len(ta), len(tb))
}

// Typed reads: each returns the zero value when ptr leads nowhere or to a
// value of another type, so a reader of a document that may be broken
// needs no chain of type assertions.

// String is the string at ptr.
func String(doc any, ptr string) (string, bool) {
	v, _ := Get(doc, ptr)
	s, ok := v.(string)
	return s, ok
}

// Int is the integer at ptr (a json.Number, int or int64 holding one).
func Int(doc any, ptr string) (int64, bool) {
	v, _ := Get(doc, ptr)
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

// Items is the array at ptr, nil when there is none.
func Items(doc any, ptr string) []any {
	v, _ := Get(doc, ptr)
	a, _ := v.([]any)
	return a
}

// Object is the object at ptr as a map, nil when it is none (or an *Obj).
func Object(doc any, ptr string) map[string]any {
	v, _ := Get(doc, ptr)
	m, _ := v.(map[string]any)
	return m
}

// Has reports whether there is a value (null included) at ptr.
func Has(doc any, ptr string) bool {
	_, ok := Get(doc, ptr)
	return ok
}
