package catalogue

import (
	"slices"
	"strings"
)

// The grid: the dimensions along which the kit varies requests to find
// where a server breaks a must requirement, named once here for the suite
// and the simulator alike.
//
//   - The probe grid is must requirement × key role × request shape × input
//     class: the suite's probes (suites/probe) are the cells its rules let
//     apply, over Roles, GridShapes and Classes. The simulator names a fault
//     confined to one of its cells FAULT@ROLE.SHAPE.CLASS with the same
//     names (simulator/mutants, cell faults).
//   - Each must requirement's row (requirements.json, "shapes"; ShapesOf)
//     lists the request shapes on which a server can break it beyond any
//     request: the simulator confines the requirement's faults to each
//     (simulator/mutants), and the kill matrix shows a shape of the row with
//     no fault as a hole. A row may name every shape of Shapes: the probe
//     grid's, and the finer ones a break hides on that the probe grid
//     reaches through its roles, operations and inputs.

// Role is the key a request sends.
type Role string

// The key roles: two valid keys (of a Pro and of a free account) and the
// four credentials that must get 401.
const (
	RolePro       Role = "pro"       // a Pro account's current key
	RoleFree      Role = "free"      // a free account's current key
	RoleRevoked   Role = "revoked"   // a key regenerated since
	RoleUnknown   Role = "unknown"   // a well-formed key of no account
	RoleMalformed Role = "malformed" // a key of another form
	RoleNone      Role = "none"      // no key
)

var roles = []Role{RolePro, RoleFree, RoleRevoked, RoleUnknown, RoleMalformed, RoleNone}

// Roles lists every key role, valid keys first.
func Roles() []Role { return slices.Clone(roles) }

// Bad reports whether the role's requests of the feed and tracked videos
// must be refused with 401.
func (r Role) Bad() bool { return r != RolePro && r != RoleFree }

// Shape is a kind of request (or of its answer) on which a server can get a
// rule wrong while it gets the common case right.
type Shape string

// The request shapes of the probe grid, the sequences the suite sends.
const (
	ShapeFirstPage      Shape = "first-page"        // a request without cursor (tracked videos: a plain request)
	ShapeCursorPage     Shape = "cursor-page"       // a feed page reached through a cursor
	ShapeReadByOtherKey Shape = "read-by-other-key" // a URL (and body) another key read just before
	ShapeBothOperations Shape = "both-operations"   // the feed and tracked videos interleaved on one key
	ShapeAfterBurst     Shape = "after-burst"       // past 20 requests of a key in a minute: while a key is throttled
	ShapeDeepPage       Shape = "deep-page"         // a feed page past the 3rd of a walk
	ShapeLiveHead       Shape = "live-head"         // a feed page after new events arrived at the head
	ShapeLongWalk       Shape = "long-walk"         // a feed page after many cursors handed to one key
)

// The finer shapes a break can hide on, which the probe grid reaches
// through its other dimensions (the free key's role, the tracked-videos
// operation, its inputs and what the target's answers hold).
const (
	ShapeOtherKey     Shape = "other-key"     // a request of another key than the first the feed served (another account and plan)
	ShapeVideos       Shape = "videos"        // any tracked-videos request
	ShapeLargeBatch   Shape = "large-batch"   // a tracked-videos request of more than 10 ids
	ShapeDuplicateIDs Shape = "duplicate-ids" // a tracked-videos request with an id twice
	ShapeMissingIDs   Shape = "missing-ids"   // a tracked-videos answer that lists a missing id
	ShapeEmptyArrays  Shape = "empty-arrays"  // a tracked-videos answer with an empty list
	ShapeBigCounts    Shape = "big-counts"    // a count past 2^31
)

var (
	gridShapes = []Shape{ShapeFirstPage, ShapeCursorPage, ShapeReadByOtherKey, ShapeBothOperations, ShapeAfterBurst, ShapeDeepPage, ShapeLiveHead, ShapeLongWalk}
	shapes     = append(slices.Clone(gridShapes), ShapeOtherKey, ShapeVideos, ShapeLargeBatch, ShapeDuplicateIDs, ShapeMissingIDs, ShapeEmptyArrays, ShapeBigCounts)
)

// GridShapes lists the request shapes of the probe grid, cheapest first.
func GridShapes() []Shape { return slices.Clone(gridShapes) }

// Shapes lists every shape a requirement's row may name: the probe grid's,
// then the finer ones.
func Shapes() []Shape { return slices.Clone(shapes) }

// Class is the kind of an input value, the probe grid's fourth dimension.
type Class string

// The input classes.
const (
	ClassDefault    Class = "default"    // the usage shown: no limit, no cursor, one id
	ClassJSONType   Class = "json-type"  // a value of another JSON type, null included
	ClassEmpty      Class = "empty"      // an empty value
	ClassWhitespace Class = "whitespace" // a value padded with whitespace
	ClassBelow      Class = "n-1"        // one under a bound
	ClassAt         Class = "n"          // at a bound
	ClassAbove      Class = "n+1"        // one past a bound
	ClassFarPast    Class = "far-past"   // far past a bound, and past what integers hold
	ClassUnicode    Class = "unicode"    // a value of one class of Unicode
	ClassTrailing   Class = "trailing"   // a valid value followed by more than whitespace: bytes, a second value, a comma
	ClassShaped     Class = "shaped"     // an id shaped like the target's own (the feed's length and alphabet) that names no video seen
)

var classes = []Class{ClassDefault, ClassJSONType, ClassEmpty, ClassWhitespace, ClassBelow, ClassAt, ClassAbove, ClassFarPast, ClassUnicode, ClassTrailing, ClassShaped}

// Classes lists every input class.
func Classes() []Class { return slices.Clone(classes) }

// ShapesOf is a must requirement's row of the grid: the request shapes on
// which a server can break it beyond any request, in the order of its
// entry. ok is false when the entry has no "shapes"; an empty row (ok) is a
// requirement broken on any request alike.
func (c Catalogue) ShapesOf(id ID) (row []Shape, ok bool) {
	row, ok = c.shapes[id]
	return slices.Clone(row), ok
}

func joinShapes(ss []Shape) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}
