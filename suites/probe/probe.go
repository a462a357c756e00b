// Package probe generates the conformance suite's probes from the
// catalogue instead of picking them: every must requirement × key role ×
// request shape × input class that the rules below let apply is a cell,
// and each cell is one probe that owns one requirement and one oracle.
// The dimensions are small tables (Roles, Shapes and Classes, the grid's
// names in schemas/catalogue, and Inputs); a cell that does not apply is
// excluded by a rule (applies), never by a list of cells.
//
// The package knows no HTTP: the suite (suites/probegrid, run by suites/conformance)
// turns each probe into a Ginkgo spec, sends its requests and judges them.
// Plan spends a profile's budget on the probes by priority (the likeliest
// break per request first), counting each distinct request once.
package probe

import (
	"fmt"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// Role is the key a probe sends: the grid's key roles (schemas/catalogue),
// two valid keys (of a Pro and of a free account) and the four credentials
// that must get 401. Bad reports whether the role's requests must be
// refused with 401.
type Role = catalogue.Role

// The key roles.
const (
	Pro       = catalogue.RolePro
	Free      = catalogue.RoleFree
	Revoked   = catalogue.RoleRevoked
	Unknown   = catalogue.RoleUnknown
	Malformed = catalogue.RoleMalformed
	None      = catalogue.RoleNone
)

// Roles lists every role, valid keys first.
var Roles = catalogue.Roles()

// authRequirement is the requirement a bad role's 401 belongs to.
var authRequirement = map[Role]catalogue.ID{
	Revoked:   catalogue.AuthRevoked,
	Unknown:   catalogue.AuthUnknown,
	Malformed: catalogue.AuthMalformed,
	None:      catalogue.AuthMissing,
}

// Shape is the request shape a probe sends its input in: the probe grid's
// shapes (schemas/catalogue).
type Shape = catalogue.Shape

// The request shapes.
const (
	FirstPage  = catalogue.ShapeFirstPage      // a request without cursor (tracked videos: a plain request)
	CursorPage = catalogue.ShapeCursorPage     // a feed page reached through the first page's cursor
	DeepPage   = catalogue.ShapeDeepPage       // a feed page past the 3rd of a walk
	LiveHead   = catalogue.ShapeLiveHead       // a feed page after new events arrived at the head
	BothOps    = catalogue.ShapeBothOperations // the feed and tracked videos interleaved on one key
	AfterBurst = catalogue.ShapeAfterBurst     // past 20 requests of the role in a minute
	ReadByKey  = catalogue.ShapeReadByOtherKey // a URL the Pro key read just before
	LongWalk   = catalogue.ShapeLongWalk       // a page past the 100th cursor of a walk
)

// Shapes lists every shape, cheapest first.
var Shapes = catalogue.GridShapes()

// Op is an operation of the API.
type Op string

// The operations.
const (
	Feed   Op = "feed"
	Videos Op = "videos"
	Health Op = "health"
)

// Verdict is what the contract says of an input.
type Verdict string

const (
	// Valid inputs must be served.
	Valid Verdict = "valid"
	// Invalid inputs must be refused with 400.
	Invalid Verdict = "invalid"
	// Either: the contract is silent (a limit below 1 or not an integer,
	// an unknown cursor): a
	// page or 400 naming the parameter are both conforming.
	Either Verdict = "either"
)

// Class is the kind of an input, the matrix's fourth dimension: the grid's
// input classes (schemas/catalogue).
type Class = catalogue.Class

// The input classes.
const (
	Default    = catalogue.ClassDefault    // the usage shown: no limit, no cursor, one id
	JSONType   = catalogue.ClassJSONType   // a value of another JSON type, null included
	Empty      = catalogue.ClassEmpty      // an empty value
	Whitespace = catalogue.ClassWhitespace // a value padded with whitespace
	Below      = catalogue.ClassBelow      // one under a bound
	At         = catalogue.ClassAt         // at a bound
	Above      = catalogue.ClassAbove      // one past a bound
	FarPast    = catalogue.ClassFarPast    // far past a bound, and past what integers hold
	Unicode    = catalogue.ClassUnicode    // a value of one class of Unicode
	Trailing   = catalogue.ClassTrailing   // a valid value followed by more than whitespace: bytes, a second value, a comma
	Shaped     = catalogue.ClassShaped     // an id shaped like the target's own (the feed's length and alphabet) that names no video seen
)

// Classes lists every input class.
var Classes = catalogue.Classes()

// Input is one value of one request field.
type Input struct {
	Op      Op
	Field   string // limit, cursor, body, videoIds, videoIds[i]
	Class   Class
	Name    string // for people: "limit=201", "32 ids of 😀"
	Verdict Verdict
	// Owner is the requirement whose rule decides the input's answer.
	Owner catalogue.ID
	// Limit and Cursor are the feed query's values; Omit leaves them out.
	Limit, Cursor string
	NoLimit       bool
	// Body is the tracked-videos or health body, as sent.
	Body string
	// IDs are the body's ids when it is a valid list of strings.
	IDs []string
	// Size is the page size a valid limit asks for (0: the default).
	Size int
	// ReplaceCursor: the input is the cursor itself (shapes that set the
	// cursor do not apply).
	ReplaceCursor bool
	// FromFeed: the ids are made when the probe runs, from the ids the
	// target's feed shows (the Shaped class); Body and IDs are empty here.
	FromFeed bool
}

// Probe is one cell: a requirement judged on one role, shape and input.
type Probe struct {
	Requirement catalogue.ID
	Role        Role
	// Key is how the role's key is derived from the Pro key ("": the
	// role's own); the forms of a role share its cells, as the inputs of
	// a class share theirs.
	Key    KeyForm
	Shape  Shape
	Input  Input
	Oracle Oracle
}

// role names the role and, for a derived key, its form.
func (p Probe) role() string {
	if p.Key != Own {
		return string(p.Role) + " (" + string(p.Key) + ")"
	}
	return string(p.Role)
}

// Name is the probe's identity, unique in a generation.
func (p Probe) Name() string {
	return fmt.Sprintf("%s × %s × %s × %s: %s", p.Requirement, p.role(), p.Shape, p.Input.Op, p.Input.Name)
}

// Cell is the probe's place in the matrix (requirement × role × shape ×
// input class).
func (p Probe) Cell() string {
	return fmt.Sprintf("%s × %s × %s × %s", p.Requirement, p.Role, p.Shape, p.Input.Class)
}

// Request is the identity of the request a probe sends: equal identities
// are one request (the suite's client answers the second from its cache).
// Probes of one request cost it once.
func (p Probe) Request() string {
	return fmt.Sprintf("%s|%s|%s|%s", p.role(), p.Input.Op, p.Sequence(), p.Input.Name)
}

// Sequence names what the probe's shape sends: the shape, or for the rate
// oracle the lockouts that measure the limiter on it, or a deep walk that
// goes on to the feed's end: where the walk ends (FEED-CURSOR-END), and the
// switches of a video's members-only state, whose two events may lie many
// pages apart (EVENT-MEMBERS-SWITCHED: judged down one cursor walk).
func (p Probe) Sequence() string {
	switch {
	case p.Oracle == OracleRate:
		return string(p.Shape) + " (lockouts)"
	case p.Shape == DeepPage && (p.Requirement == catalogue.FeedCursorEnd || p.Requirement == catalogue.EventMembersSwitched):
		return string(p.Shape) + " (to the end)"
	}
	return string(p.Shape)
}
