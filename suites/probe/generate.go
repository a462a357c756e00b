package probe

import (
	"fmt"
	"slices"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// Oracle is how a probe judges its answers: one per requirement.
type Oracle string

// The oracles.
const (
	OracleAuth        Oracle = "status of the key"          // 401 for a bad key, never 401 for a valid one, 403 for a free key on tracked videos
	OracleInput       Oracle = "status of the input"        // 200, 400, or either, as the input's verdict says, and what the input asks (page size, cap, details)
	OracleErrorBody   Oracle = "error body"                 // every error answer is an ErrorBody
	OracleContentType Oracle = "content type"               // every answer is JSON
	OracleSchema      Oracle = "schema"                     // every 200 validates (the requirement's part of the schema)
	OraclePageSize    Oracle = "page size"                  // default 50, limit n, capped at 200, fewer only on the last page
	OracleOrder       Oracle = "order"                      // newest first
	OracleWalk        Oracle = "walk"                       // each event once, to a null nextCursor
	OracleTenant      Oracle = "tenant"                     // no event or video of another account
	OracleLists       Oracle = "videos and missingVideoIds" // each id answered once, as sent
	OracleRate        Oracle = "rate accounting"            // no more admitted than any 20-a-minute limiter admits; 429 with Retry-After
	OracleHealth      Oracle = "health"                     // {"status":"ok"}
)

// oracles is each must requirement's oracle: the one table of the
// generator that names requirements. A must requirement missing here is
// an error of Generate.
var oracles = map[catalogue.ID]Oracle{
	catalogue.HealthOK:             OracleHealth,
	catalogue.AuthMissing:          OracleAuth,
	catalogue.AuthMalformed:        OracleAuth,
	catalogue.AuthUnknown:          OracleAuth,
	catalogue.AuthRevoked:          OracleAuth,
	catalogue.AuthValid:            OracleAuth,
	catalogue.ProGate:              OracleAuth,
	catalogue.FeedPageSchema:       OracleSchema,
	catalogue.FeedOrder:            OracleOrder,
	catalogue.FeedPageDefault:      OraclePageSize,
	catalogue.FeedLimit:            OraclePageSize,
	catalogue.FeedLimitCap:         OraclePageSize,
	catalogue.FeedCursorWalk:       OracleWalk,
	catalogue.FeedCursorEnd:        OracleWalk,
	catalogue.FeedTenant:           OracleTenant,
	catalogue.FeedBadParam:         OracleInput,
	catalogue.EventSchema:          OracleSchema,
	catalogue.EventTypes:           OracleSchema,
	catalogue.EventChannelNoVideo:  OracleSchema,
	catalogue.TimestampEpochMs:     OracleSchema,
	catalogue.CountNonnegOrNull:    OracleSchema,
	catalogue.URIFormat:            OracleSchema,
	catalogue.EventIDUnique:        OracleWalk,
	catalogue.EventChangeDiffers:   OracleSchema,
	catalogue.EventAbVariants:      OracleSchema,
	catalogue.EventMembersSwitched: OracleWalk,
	catalogue.EventPublishedOnce:   OracleWalk,
	catalogue.VideosIDsMin:         OracleInput,
	catalogue.VideosIDsMax:         OracleInput,
	catalogue.VideosIDLen:          OracleInput,
	catalogue.VideosBadBody:        OracleInput,
	catalogue.VideosEntrySchema:    OracleSchema,
	catalogue.VideosServed:         OracleLists,
	catalogue.VideosMissing:        OracleLists,
	catalogue.VideosPartition:      OracleLists,
	catalogue.VideosTenant:         OracleTenant,
	catalogue.RateLimit429:         OracleRate,
	catalogue.RateRetryAfter:       OracleRate,
	catalogue.RateAllows20:         OracleRate,
	catalogue.RatePerKey:           OracleRate,
	catalogue.ErrorBody:            OracleErrorBody,
	catalogue.ContentTypeJSON:      OracleContentType,
}

// OracleOf is a requirement's oracle ("" for one that has none).
func OracleOf(id catalogue.ID) Oracle { return oracles[id] }

// Generate makes every probe: each must requirement × role × shape ×
// input that the rules let apply. It fails when a must requirement has no
// oracle or no probe.
func Generate(cat catalogue.Catalogue) ([]Probe, error) {
	inputs := Inputs()
	var out []Probe
	for _, r := range cat.OfKind(catalogue.Must) {
		o, ok := oracles[r.ID]
		if !ok {
			return nil, fmt.Errorf("probe: must requirement %s has no oracle (suites/probe/generate.go)", r.ID)
		}
		n := len(out)
		for _, role := range Roles {
			for _, shape := range Shapes {
				for _, in := range inputs {
					if !applies(r.ID, o, role, shape, in) {
						continue
					}
					out = append(out, Probe{Requirement: r.ID, Role: role, Shape: shape, Input: in, Oracle: o})
					// The keys derived from the Pro key take the usage
					// shown: the key is what varies.
					for _, f := range KeyForms {
						if f.Role() == role && in.Class == Default {
							out = append(out, Probe{Requirement: r.ID, Role: role, Key: f, Shape: shape, Input: in, Oracle: o})
						}
					}
				}
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("probe: must requirement %s has no applicable cell", r.ID)
		}
	}
	return out, nil
}

// feedShapes are the shapes only the feed has (a cursor, a walk, a head).
var feedShapes = []Shape{CursorPage, DeepPage, LiveHead, LongWalk}

// applies is the rule that keeps a cell, or excludes it. First what holds
// for every requirement (where a shape and an input can meet, which roles
// can send them), then what the requirement's oracle can judge.
func applies(id catalogue.ID, o Oracle, role Role, shape Shape, in Input) bool {
	// Past 20 requests in a minute a valid key's answers are 429s: what
	// they say of the key, their bodies and the limiter is judged there,
	// not the pages they do not hold.
	if shape == AfterBurst && !role.Bad() && (o == OracleSchema || o == OraclePageSize || o == OracleOrder || o == OracleWalk || o == OracleLists || o == OracleTenant) {
		return false
	}
	return meets(shape, in) && sends(role, shape, in) && judges(id, o, role, shape, in)
}

// meets reports whether a shape and an input can meet in one request.
func meets(shape Shape, in Input) bool {
	switch {
	case in.Op == Health:
		// The health operation takes a body and has no shape but the
		// plain request; whether it takes a key is open, so it is asked
		// with every role's (a 200 must still be a HealthBody).
		if shape != FirstPage {
			return false
		}
	case slices.Contains(feedShapes, shape) && in.Op != Feed:
		return false
	case in.ReplaceCursor && shape != FirstPage:
		return false // the input is the cursor: shapes that set one do not meet it
	case shape == CursorPage || shape == DeepPage:
		if in.Field != "limit" || in.Verdict != Valid || in.Class == FarPast {
			return false // a page of a walk takes a valid page size; far past the cap is the cap's (first pages)
		}
	case shape == LongWalk:
		if in.Field != "limit" || in.Limit != "1" {
			return false // a cursor for every event: past 100 cursors soonest
		}
	case shape != FirstPage && in.Class != Default:
		return false // the other shapes take the usage shown: the shape is what varies
	}
	return true
}

// sends reports whether a role sends a shape and an input.
func sends(role Role, shape Shape, in Input) bool {
	// Ids made from the Pro account's feed are the Pro key's to ask.
	if in.FromFeed && role != Pro {
		return false
	}
	// Which roles send what. A bad key is refused whatever it asks: its
	// probes send the shapes where a limiter, a cache or a cursor may
	// stand before authentication, not the walks of an account.
	if role.Bad() && (shape == LiveHead || shape == LongWalk) {
		return false
	}
	// A URL another key read: the Pro key is the one that read it.
	if role == Pro && shape == ReadByKey {
		return false
	}
	// The free account's feed is short: its long walks are the Pro's. Its
	// inputs are the valid ones: the plan gate and its own pages are what
	// vary; where a body or a parameter is invalid, which error wins is
	// open, and the Pro key asks them.
	if role == Free && (shape == LongWalk || in.Verdict != Valid) {
		return false
	}
	return true
}

// judges reports whether the requirement's oracle can judge what a role's
// request of that shape and input answers.
func judges(id catalogue.ID, o Oracle, role Role, shape Shape, in Input) bool {
	switch o {
	case OracleHealth:
		// what health answers to a body that is no object is open
		return in.Op == Health && in.Verdict == Valid
	case OracleAuth:
		switch id {
		case catalogue.AuthValid:
			return !role.Bad() && in.Op != Health && (role == Pro || in.Op == Feed)
		case catalogue.ProGate:
			return role == Free && in.Op != Health
		}
		return authRequirement[role] == id && in.Op != Health
	case OracleInput:
		// The input's own rule, with a key that may ask it.
		return in.Owner == id && shape == FirstPage && !role.Bad() && (role == Pro || in.Op == Feed)
	case OracleErrorBody:
		// Where the answer may be an error.
		// (health: any answer with a key, whether it takes one is open)
		return role.Bad() || in.Verdict != Valid || role == Free && in.Op == Videos || shape == AfterBurst && !role.Bad() && in.Op != Health ||
			in.Op == Health
	case OracleContentType:
		return true
	case OracleSchema:
		// 200s of the role's own data. Events and VideoEntries come only
		// for ids that name videos: the generated ids name none, so the
		// events of tracked videos are judged on the feed's ids (the
		// events specs) and the feed here.
		if role.Bad() || in.Verdict == Invalid || in.Op == Health {
			return false
		}
		switch id {
		case catalogue.FeedPageSchema:
			return in.Op == Feed
		case catalogue.VideosEntrySchema:
			return in.Op == Videos && role == Pro && shape == FirstPage
		}
		return in.Op == Feed && in.Verdict == Valid
	case OraclePageSize:
		if role.Bad() || in.Op != Feed || shape == BothOps || shape == AfterBurst || shape == ReadByKey {
			return false
		}
		if id == catalogue.FeedPageDefault {
			return in.Class == Default && shape != LongWalk
		}
		return in.Owner == id && shape != LiveHead && shape != LongWalk
	case OracleOrder:
		return !role.Bad() && in.Op == Feed && in.Verdict == Valid && shape != AfterBurst && shape != ReadByKey && shape != BothOps
	case OracleWalk:
		if role.Bad() || in.Op != Feed || in.Class != Default && shape != LongWalk {
			return false
		}
		switch id {
		case catalogue.FeedCursorEnd:
			return shape == DeepPage || shape == LongWalk
		}
		return shape == CursorPage || shape == DeepPage || shape == LiveHead || shape == LongWalk
	case OracleTenant:
		if id == catalogue.FeedTenant {
			// a URL of the Pro key (its cursor pages) read with the free key
			return role == Free && in.Op == Feed && in.Class == Default && (shape == ReadByKey || shape == CursorPage)
		}
		return role == Pro && in.Op == Videos && in.Class == Default && shape == FirstPage
	case OracleLists:
		if role != Pro || in.Op != Videos || in.Verdict == Invalid {
			return false
		}
		if id == catalogue.VideosServed {
			return in.Class == Default && (shape == FirstPage || shape == BothOps)
		}
		return shape == FirstPage
	case OracleRate:
		// Lockouts on the free key, the one the suite exhausts (the Pro key
		// walks meanwhile); the operations interleaved on the Pro key, whose
		// tracked videos answer 200 (a free key's get 403).
		if in.Class != Default || in.Op != Feed {
			return false
		}
		switch shape {
		case AfterBurst:
			return role == Free
		case BothOps:
			return role == Pro && (id == catalogue.RateLimit429 || id == catalogue.RateRetryAfter)
		}
		return false
	}
	return false
}
