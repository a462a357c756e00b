// Package cli is how every binary of the kit reads its settings and prints
// its help: flags (a standard flag.FlagSet, so -name and --name both work),
// each with an environment variable of the binary's prefix, parsed by
// github.com/peterbourgon/ff/v4 with one precedence: defaults < environment
// < flags the user set.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/peterbourgon/ff/v4"
	"github.com/peterbourgon/ff/v4/ffhelp"
)

// Command describes a binary for its help.
type Command struct {
	Name      string // the binary's name
	Usage     string // one line: how it is called
	About     string // what it does, a paragraph or two
	EnvPrefix string // prefix of every flag's environment variable, such as TCM_SIM
}

// EnvName is the environment variable of a flag: the prefix, then the
// flag's name in upper case with - as _.
func (c Command) EnvName(flagName string) string {
	return c.EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Parse fills fs from args and the environment. On --help or -h it prints
// the help to stdout and returns flag.ErrHelp; an argument that is not a
// flag is an error.
func (c Command) Parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	ffs := ff.NewFlagSetFrom(c.Name, fs)
	err := ff.Parse(ffs, args, ff.WithEnvVarPrefix(c.EnvPrefix))
	if errors.Is(err, ff.ErrHelp) {
		c.Help(stdout, fs)
		return flag.ErrHelp
	}
	if err != nil {
		return errors.New(strings.TrimPrefix(strings.TrimPrefix(err.Error(), "parse args: "), "parse environment: "))
	}
	if rest := ffs.GetArgs(); len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q", rest[0])
	}
	return nil
}

// Help prints the help: name, usage, what the binary does, every flag with
// its default, and every flag's environment variable.
func (c Command) Help(w io.Writer, fs *flag.FlagSet) {
	help := ffhelp.Help{ffhelp.NewSection("NAME", c.Name), ffhelp.NewSection("USAGE", c.Usage)}
	if c.About != "" {
		help = append(help, ffhelp.NewUntitledSection(c.About))
	}
	// The flags as a getopt-style set, so the help shows --name (both
	// -name and --name are accepted).
	listed := ff.NewFlagSet(c.Name)
	fs.VisitAll(func(f *flag.Flag) {
		placeholder, usage := flag.UnquoteUsage(f)
		_, _ = listed.AddFlag(ff.FlagConfig{LongName: f.Name, Usage: usage, Value: f.Value,
			Placeholder: strings.ToUpper(placeholder), NoPlaceholder: placeholder == "",
			NoDefault: f.DefValue == "" || f.DefValue == "false"})
	})
	help = append(help, ffhelp.NewFlagsSections(listed)...)
	var env []string
	width := 0
	fs.VisitAll(func(f *flag.Flag) { width = max(width, len(c.EnvName(f.Name))) })
	fs.VisitAll(func(f *flag.Flag) {
		env = append(env, fmt.Sprintf("%-*s  --%s", width, c.EnvName(f.Name), f.Name))
	})
	help = append(help, ffhelp.NewSection("ENVIRONMENT (flags given win over these)", env...))
	_, _ = help.WriteTo(w)
}
