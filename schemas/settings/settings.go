// Package settings is the kit's one configuration dialect, shared by the
// conformance suite (package suites/conformance) and every command of cmd/:
//
//   - A setting is a field of a Config struct with an ff struct tag
//     (github.com/peterbourgon/ff/v4): the tag gives its flag and its help;
//     its environment variable is EnvName of the program's prefix and the
//     flag (--pro-key: TCM_PRO_KEY; the simulator's --feed-limit:
//     TCM_SIM_FEED_LIMIT).
//   - One precedence: the default (the field's value before parsing) <
//     the environment variable < the flag given on the command line. A flag
//     given wins even when it repeats the default or is empty.
//   - One meaning of zero for a count, a size, a limit or a duration: 0 is
//     the setting's default, on the command line as in the Config struct
//     (a Go program that leaves a field zero gets the same default). Where
//     a setting can be switched off or be unlimited, that is -1. Ratios and
//     rates (a speed, an edge-case rate) are numbers, and 0 is zero; their
//     help says what it does.
//
// Parse reads a Config struct's settings from the command line and the
// environment; Bind puts them on a standard flag set someone else parses
// (go test's); Suggest offers the nearest known flag for a mistyped one.
package settings

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v4"
)

// EnvName is the environment variable of a flag: the prefix, an
// underscore, and the flag's name in upper case with - as _ (the name ff
// derives with ff.WithEnvVarPrefix).
func EnvName(prefix, flagName string) string {
	name := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_", "/", "_").Replace(strings.TrimLeft(flagName, "-")))
	if prefix == "" {
		return name
	}
	return strings.ToUpper(prefix) + "_" + name
}

// Suggest returns the name in known nearest to name, a mistyped flag, fault
// or scenario (a flag without its dashes), or "" when none is near: a name
// equal once dashes and case are ignored, one the mistyped name begins or
// is the beginning of, or one within two edits (one for a name shorter than
// 6). Between names as near, the one that shares the longest beginning with
// the mistyped one wins (--sped: speed, not seed), then the first listed.
func Suggest(name string, known []string) string {
	name = strings.TrimLeft(name, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	flat := func(s string) string {
		return strings.ToLower(strings.NewReplacer("-", "", "_", "", ".", "").Replace(s))
	}
	lower := strings.ToLower(name)
	// Ranks are edits counted twice, so that a prefix (3) comes after one
	// edit and before two.
	best, bestR, bestP := "", 6, 0
	if len(name) < 6 {
		bestR = 4
	}
	for _, k := range known {
		if flat(k) == flat(name) {
			return k
		}
		r := 2 * distance(lower, k)
		if len(name) >= 4 && len(k) >= 4 && (strings.HasPrefix(k, name) || strings.HasPrefix(name, k)) {
			r = min(r, 3) // a piece of the name, or the name and more
		}
		p := commonPrefix(lower, k)
		if r < bestR || (r == bestR && best != "" && p > bestP) {
			best, bestR, bestP = k, r, p
		}
	}
	return best
}

// Nearest returns the value of a short list (a setting's few allowed
// values: quick or thorough) nearest to value, however far: Suggest's
// choice when it has one, else the one fewest edits away (case ignored),
// the first listed among equals; "" only when known is empty.
func Nearest(value string, known []string) string {
	if s := Suggest(value, known); s != "" {
		return s
	}
	best, bestD := "", -1
	lower := strings.ToLower(value)
	for _, k := range known {
		if d := distance(lower, strings.ToLower(k)); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// commonPrefix is the length of the beginning a and b share, in bytes.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Flags is the ff flag set of cfg's settings: cfg is a pointer to a struct
// whose fields with an ff tag are settings, and the values they hold now
// are the defaults.
func Flags(name string, cfg any) *ff.FlagSet { return ff.NewFlagSetFrom(name, cfg) }

// Bind registers fs's flags on std, a standard flag set, so that -name and
// --name both work; a flag set through std is set on fs too, so that
// ParseEnv, called once std was parsed, fills only the settings the user
// did not set. usage gives each flag's help on std from the setting's.
func Bind(fs *ff.FlagSet, std *flag.FlagSet, usage func(name, help string) string) {
	fs.WalkFlags(func(f ff.Flag) error {
		name, _ := f.GetLongName()
		help := f.GetUsage()
		if usage != nil {
			help = usage(name, help)
		}
		std.Var(stdValue{f}, name, help)
		if short, ok := f.GetShortName(); ok { // -v as well as --verbose
			std.Var(stdValue{f}, string(short), help)
		}
		return nil
	})
}

// ParseEnv sets every setting of fs that is still unset from its
// environment variable (EnvName of prefix and the flag).
func ParseEnv(fs *ff.FlagSet, prefix string) error {
	err := ff.Parse(fs, nil, ff.WithEnvVarPrefix(prefix))
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "parse environment: "))
	}
	return nil
}

// Parse sets fs's settings from args (flags, -name or --name) and then,
// for those not given, from the environment. It returns the arguments
// after the flags, flag.ErrHelp for -h or --help, and for a flag it does
// not know an error that suggests the nearest one.
func Parse(fs *ff.FlagSet, args []string, prefix string) ([]string, error) {
	std := flag.NewFlagSet(fs.GetName(), flag.ContinueOnError)
	std.SetOutput(io.Discard)
	std.Usage = func() {}
	Bind(fs, std, nil)
	if err := std.Parse(args); err != nil {
		return nil, Unknown(err, Names(fs))
	}
	return std.Args(), ParseEnv(fs, prefix)
}

// Names are the long names of fs's flags.
func Names(fs *ff.FlagSet) []string {
	var names []string
	fs.WalkFlags(func(f ff.Flag) error {
		name, _ := f.GetLongName()
		names = append(names, name)
		return nil
	})
	return names
}

// notDefined starts the standard flag package's error for a flag it does
// not know.
const notDefined = "flag provided but not defined: "

// Unknown rewrites the standard flag package's error for an unknown flag
// as "unknown flag --prokey (did you mean --pro-key?)"; any other error is
// returned as it is.
func Unknown(err error, known []string) error {
	msg := err.Error()
	if !strings.HasPrefix(msg, notDefined) {
		return err
	}
	name := strings.TrimLeft(strings.TrimPrefix(msg, notDefined), "-")
	if s := Suggest(name, known); s != "" {
		return fmt.Errorf("unknown flag --%s (did you mean --%s?)", name, s)
	}
	return fmt.Errorf("unknown flag --%s", name)
}

// stdValue is an ff flag seen by a standard flag set: setting it through
// the standard set marks it set for ff too.
type stdValue struct{ f ff.Flag }

func (v stdValue) Set(s string) error { return v.f.SetValue(s) }

func (v stdValue) String() string {
	if v.f == nil { // flag.PrintDefaults asks a zero value
		return ""
	}
	return v.f.GetValue()
}

// IsBoolFlag lets a boolean setting stand alone (--control-clock). ff
// keeps which flags are boolean to itself but shows it in help: the
// placeholder of a boolean is empty while it is false, BOOL otherwise.
func (v stdValue) IsBoolFlag() bool {
	return v.f != nil && (v.f.GetPlaceholder() == "" || v.f.GetPlaceholder() == "BOOL")
}

// List is a setting that may be given many times, each time one item or
// several separated by commas (its environment variable is one string:
// TCM_SIM_CORS="http://a,http://b").
type List []string

func (l *List) Set(v string) error {
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*l = append(*l, item)
		}
	}
	return nil
}

func (l *List) String() string { return strings.Join(*l, ",") }

// GetPlaceholder names a list's items in help.
func (l *List) GetPlaceholder() string { return "NAME" }

// TimeFlag is a setting that is an instant in RFC 3339
// (2026-01-01T00:00:00Z), kept in a time.Time of someone else's struct:
// ff.FlagConfig{LongName: "start", Value: settings.TimeFlag{&cfg.Start}}.
type TimeFlag struct{ T *time.Time }

func (t TimeFlag) Set(v string) error {
	parsed, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return fmt.Errorf("want RFC 3339, such as 2026-01-01T00:00:00Z")
	}
	if parsed.IsZero() {
		// The zero time is how a struct says "the default": taken, it
		// would be the default, not the time given.
		return fmt.Errorf("%s is the zero time, which means the default: want a time from 1970 on, such as 2026-01-01T00:00:00Z", v)
	}
	*t.T = parsed
	return nil
}

func (t TimeFlag) String() string {
	if t.T == nil { // flag.PrintDefaults asks a zero value
		return ""
	}
	return t.T.Format(time.RFC3339)
}

// GetPlaceholder names the format in help.
func (t TimeFlag) GetPlaceholder() string { return "RFC3339" }
