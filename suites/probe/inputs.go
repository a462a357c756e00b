package probe

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// The input boundaries of every request field, generated from the
// contract's bounds (package schemas): n-1, n and n+1 at each bound and far
// past it, every JSON type, empty and padded values, and each class of
// Unicode.

// bound is one numeric bound of a field: values at lo..hi are valid.
type bound struct {
	lo, hi int
}

// unicodeClass is a class of characters, one rune standing for it.
type unicodeClass struct {
	name string
	r    string // one character of the class (a combining pair is two code points)
	// exact: the class's length in characters is the same however a
	// server counts (code points, graphemes); false for combining marks,
	// whose count past a bound is open.
	exact bool
}

var unicodeClasses = []unicodeClass{
	{"ASCII", "a", true},
	{"Latin-1 (2 bytes)", "é", true},
	{"right-to-left (2 bytes)", "ع", true},
	{"CJK (3 bytes)", "漢", true},
	{"zero-width (3 bytes)", "\u200b", true},
	{"beyond the BMP (4 bytes, 2 UTF-16 units)", "😀", true},
	{"combining marks", "e\u0301", false},
}

// Inputs generates the inputs of every request field.
func Inputs() []Input {
	var out []Input
	out = append(out, limitInputs()...)
	out = append(out, cursorInputs()...)
	out = append(out, videosInputs()...)
	out = append(out, healthInputs()...)
	return out
}

// DefaultInput is the usage shown for an operation.
func DefaultInput(op Op) Input {
	for _, in := range Inputs() {
		if in.Op == op && in.Class == Default {
			return in
		}
	}
	panic("probe: no default input for " + op)
}

func limitInputs() []Input {
	owner := func(n int) (catalogue.ID, Verdict) {
		switch {
		case n < 1:
			return catalogue.FeedBadParam, Either
		case n > schemas.MaxPageSize:
			return catalogue.FeedLimitCap, Valid
		}
		return catalogue.FeedLimit, Valid
	}
	lim := func(class Class, v string, owner catalogue.ID, verdict Verdict, size int) Input {
		q := strconv.Quote(v)
		return Input{Op: Feed, Field: "limit", Class: class, Name: "limit=" + q[1:len(q)-1], Verdict: verdict, Owner: owner, Limit: v, Size: size}
	}
	out := []Input{{Op: Feed, Field: "limit", Class: Default, Name: "no limit", Verdict: Valid, Owner: catalogue.FeedPageDefault, NoLimit: true, Size: schemas.DefaultPageSize}}
	b := bound{1, schemas.MaxPageSize}
	for _, n := range []struct {
		n     int
		class Class
	}{{b.lo - 1, Below}, {b.lo, At}, {b.lo + 1, Above}, {b.hi - 1, Below}, {b.hi, At}, {b.hi + 1, Above}} {
		id, v := owner(n.n)
		out = append(out, lim(n.class, strconv.Itoa(n.n), id, v, min(max(n.n, 0), schemas.MaxPageSize)))
	}
	// Far past: well past the cap, past 32-bit and 64-bit integers (an
	// integer however long: capped, "larger values are capped"), and far
	// below.
	out = append(out,
		lim(FarPast, "1000", catalogue.FeedLimitCap, Valid, schemas.MaxPageSize),
		lim(FarPast, "2147483648", catalogue.FeedLimitCap, Valid, schemas.MaxPageSize),
		lim(FarPast, "9223372036854775808", catalogue.FeedLimitCap, Valid, schemas.MaxPageSize),
		lim(FarPast, "-2147483649", catalogue.FeedBadParam, Either, 0),
	)
	// Not an integer: every JSON type as a query value, empty, padded,
	// digits of other scripts. The contract is silent on each.
	for _, v := range []struct {
		class Class
		v     string
	}{
		{JSONType, "null"}, {JSONType, "true"}, {JSONType, "1.5"}, {JSONType, "1e2"}, {JSONType, "abc"}, {JSONType, "[5]"}, {JSONType, "{}"},
		{Empty, ""}, {Whitespace, " 5 "}, {Whitespace, "\t5"},
		{Unicode, "٥"}, {Unicode, "５"},
		{Trailing, "50abc"}, // what a reader of the leading digits takes for 50
	} {
		out = append(out, lim(v.class, v.v, catalogue.FeedBadParam, Either, 0))
	}
	return out
}

func cursorInputs() []Input {
	cur := func(class Class, name, v string) Input {
		return Input{Op: Feed, Field: "cursor", Class: class, Name: "cursor " + name, Verdict: Either, Owner: catalogue.FeedBadParam, Cursor: v, NoLimit: true, ReplaceCursor: true}
	}
	out := []Input{
		cur(JSONType, "null", "null"),
		cur(Empty, "empty", ""),
		cur(Whitespace, "of spaces", "   "),
		cur(FarPast, "of 4096 characters", strings.Repeat("c", 4096)),
		cur(Unicode, "unknown (ASCII)", "tcmkit-no-such-cursor"),
	}
	for _, u := range unicodeClasses[1:] {
		out = append(out, cur(Unicode, "of "+u.name, strings.Repeat(u.r, 8)))
	}
	return out
}

// videoIDs are n ids of length characters each, none of which can name a
// video: '~' is in no platform's id alphabet (the ASCII class), and no
// platform id holds the other classes' characters.
func videoIDs(n, length int, u unicodeClass) []string {
	ids := make([]string, n)
	for i := range ids {
		if u.name == "ASCII" {
			s := fmt.Sprintf("~probe~%d~", i)
			for len(s) < length {
				s += "x"
			}
			ids[i] = s[:max(length, 0)]
			continue
		}
		// a distinct first character, then the class's
		runes := []rune(strings.Repeat(u.r, length))
		if !u.exact {
			runes = []rune(strings.Repeat(u.r, (length+1)/2))[:length]
		}
		if length > 0 {
			runes[0] = rune('A' + i%26)
		}
		ids[i] = string(runes)
	}
	return ids
}

// Invented reports whether id is one the probes' inputs made so that it
// names no video (videoIDs, plainID, the padded and blank ids); the shaped
// ids, made from the feed's when a probe runs, are not. The contract
// oracle lists such an id missing (VIDEOS-MISSING) whoever sends it.
func Invented(id string) bool {
	inventedOnce.Do(func() {
		invented = map[string]bool{}
		for _, in := range videosInputs() {
			for _, id := range in.IDs {
				invented[id] = true
			}
		}
	})
	return invented[id]
}

var (
	inventedOnce sync.Once
	invented     map[string]bool
)

// plainID goes with the id whose length a probe varies: a request of two
// ids is at no bound of their count (one id is VIDEOS-IDS-MIN's bound).
const plainID = "~probe~plain~"

func body(ids []string) string {
	raw, _ := json.Marshal(map[string][]string{"videoIds": ids})
	return string(raw)
}

func videosInputs() []Input {
	ascii := unicodeClasses[0]
	one := videoIDs(1, 24, ascii)
	padded := []string{"  ~probe~padded~  ", plainID}
	out := []Input{
		videosInput(Default, "1 id", catalogue.VideosIDsMin, Valid, body(one), one),
		// First after the usage shown, where a quick run reaches them: a
		// class of each that one-rule breaks written blind slipped past
		// (issue 24): a reader of the body's first JSON value alone, ids
		// trimmed before the lookup, stubs for ids shaped like real ones.
		videosInput(Trailing, "a valid body followed by other bytes", catalogue.VideosBadBody, Invalid, body(one)+"garbage", nil),
		videosInput(Whitespace, "an id padded with spaces", catalogue.VideosIDLen, Valid, body(padded), padded),
		// Made when the probe runs from the feed's ids (their length and
		// alphabet), naming no video the feed shows; the VIDEOS-ID-LEN
		// rule makes it valid.
		{Op: Videos, Field: "videoIds", Class: Shaped, Name: "1 id shaped like the feed's", Verdict: Valid, Owner: catalogue.VideosIDLen, FromFeed: true},
	}
	// The body and videoIds of every other JSON type.
	for _, v := range []struct {
		class      Class
		name, body string
	}{
		{JSONType, "a body of null", "null"},
		{JSONType, "a body that is an array", `["` + one[0] + `"]`},
		{JSONType, "a body that is a string", `"` + one[0] + `"`},
		{Empty, "an empty body", ""},
		{Empty, "an empty object", "{}"},
		{JSONType, "videoIds null", `{"videoIds":null}`},
		{JSONType, "videoIds a string", `{"videoIds":"` + one[0] + `"}`},
		{JSONType, "videoIds a number", `{"videoIds":7}`},
		{JSONType, "videoIds an object", `{"videoIds":{"0":"` + one[0] + `"}}`},
		{JSONType, "an id null", `{"videoIds":[null]}`},
		{JSONType, "an id a number", `{"videoIds":[42]}`},
		{JSONType, "an id true", `{"videoIds":[true]}`},
		{JSONType, "an id an array", `{"videoIds":[["` + one[0] + `"]]}`},
	} {
		out = append(out, videosInput(v.class, v.name, catalogue.VideosBadBody, Invalid, v.body, nil))
	}
	out = append(out, videosInput(Whitespace, "a valid body padded with whitespace", catalogue.VideosBadBody, Valid, " \n"+body(one)+"\t ", one))
	out = append(out, videosCountInputs()...)
	out = append(out, videosLengthInputs()...)
	space := []string{" ", plainID}
	out = append(out, videosInput(Whitespace, "an id of one space", catalogue.VideosIDLen, Valid, body(space), space))
	// 20 ids of 32 characters beyond the BMP: the largest valid body.
	largest := videoIDs(schemas.MaxVideoIDs, schemas.MaxVideoIDLen, unicodeClasses[5])
	out = append(out, videosInput(Unicode, "20 ids of 32 characters beyond the BMP", catalogue.VideosIDsMax, Valid, body(largest), largest))
	// The rest of the bodies that are not exactly one JSON value (the
	// padded body above is one: whitespace after it is JSON's).
	for _, v := range []struct{ name, body string }{
		{"two JSON objects", body(one) + body(one)},
		{"a trailing comma in the object", strings.TrimSuffix(body(one), "}") + ",}"},
	} {
		out = append(out, videosInput(Trailing, v.name, catalogue.VideosBadBody, Invalid, v.body, nil))
	}
	return out
}

// videosInput is an input of the tracked-videos body; ids are what a valid
// one asks.
func videosInput(class Class, name string, owner catalogue.ID, verdict Verdict, b string, ids []string) Input {
	in := Input{Op: Videos, Field: "videoIds", Class: class, Name: name, Verdict: verdict, Owner: owner, Body: b}
	if verdict != Invalid {
		in.IDs = ids
	}
	return in
}

// videosCountInputs are the count of ids at its bounds, 1..20.
func videosCountInputs() []Input {
	ascii := unicodeClasses[0]
	var out []Input
	for _, n := range []struct {
		n     int
		class Class
	}{{0, Below}, {1, At}, {2, Above}, {19, Below}, {20, At}, {21, Above}, {100, FarPast}} {
		ids := videoIDs(n.n, 24, ascii)
		owner, verdict := catalogue.VideosIDsMax, Valid
		if n.n <= 2 {
			owner = catalogue.VideosIDsMin
		}
		if n.n < schemas.MinVideoIDs || n.n > schemas.MaxVideoIDs {
			verdict = Invalid
		}
		out = append(out, videosInput(n.class, fmt.Sprintf("%d ids", n.n), owner, verdict, body(ids), ids))
	}
	return out
}

// videosLengthInputs are the length of one id at its bounds, 1..32
// characters, in every class of Unicode.
func videosLengthInputs() []Input {
	var out []Input
	for _, u := range unicodeClasses {
		for _, n := range []struct {
			n     int
			class Class
		}{{0, Below}, {1, At}, {2, Above}, {31, Below}, {32, At}, {33, Above}, {1000, FarPast}} {
			if u.name != "ASCII" && n.n < 31 && n.n != 1 {
				continue // the short bounds are the same in every class
			}
			if u.name != "ASCII" && n.n == 1 && !u.exact {
				continue
			}
			class := n.class
			if u.name != "ASCII" {
				class = Unicode
			}
			ids := append(videoIDs(1, n.n, u), plainID)
			verdict := Valid
			if n.n < schemas.MinVideoIDLen || n.n > schemas.MaxVideoIDLen {
				verdict = Invalid
				if !u.exact && n.n <= 2*schemas.MaxVideoIDLen {
					verdict = Either // counted in graphemes, it is short enough
				}
			}
			out = append(out, videosInput(class, fmt.Sprintf("an id of %d characters (%s)", n.n, u.name), catalogue.VideosIDLen, verdict, body(ids), ids))
		}
	}
	return out
}

func healthInputs() []Input {
	h := func(class Class, name, b string, verdict Verdict) Input {
		return Input{Op: Health, Field: "body", Class: class, Name: name, Verdict: verdict, Owner: catalogue.HealthOK, Body: b}
	}
	return []Input{
		h(Default, "{}", "{}", Valid),
		h(Whitespace, "{} padded with whitespace", " {} \n", Valid),
		h(JSONType, "an object with a member", `{"probe":"é😀"}`, Valid),
		// not an object: the contract shows only the object
		h(JSONType, "null", "null", Either),
		h(Empty, "an empty body", "", Either),
	}
}
