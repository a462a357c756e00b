// Package cli is how every command of the kit reads its settings and prints
// its help, in the dialect of package schemas/settings: a command's
// settings are the ff-tagged fields of one struct (or of several, see Parse), each with a flag (-name
// and --name both work), an environment variable of the command's prefix,
// and one precedence: defaults < environment < flags given. Zero means the
// default; -1 means none or unlimited where the help says so.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/peterbourgon/ff/v4"
	"github.com/peterbourgon/ff/v4/ffhelp"

	"github.com/tcmkit/tcmkit/schemas/settings"
)

// Command describes a command for its help.
type Command struct {
	Name      string // as typed: "tcmkit simulate", "simulator"
	Usage     string // one line: how it is called, after "USAGE"
	About     string // what it does, a few lines
	EnvPrefix string // prefix of every flag's environment variable, such as TCM_SIM
	Notes     string // printed after the flags and the environment (exit status, examples)
}

// Parse fills cfg, a pointer to a struct whose ff-tagged fields are the
// settings (the values it holds are the defaults), and the structs of more
// like it (or ff.FlagConfig values, for a field of a type ff cannot hold), from the environment and args. On -h or --help it prints the
// help to stdout and returns flag.ErrHelp; an unknown flag is an error
// naming the nearest one; an argument that is not a flag is an error.
func (c Command) Parse(cfg any, args []string, stdout io.Writer, more ...any) error {
	fs := settings.Flags(c.Name, cfg)
	for _, m := range more {
		var err error
		if f, ok := m.(ff.FlagConfig); ok { // a setting kept in a field ff cannot hold (settings.TimeFlag)
			_, err = fs.AddFlag(f)
		} else {
			err = fs.AddStruct(m)
		}
		if err != nil {
			return err
		}
	}
	rest, err := settings.Parse(fs, args, c.EnvPrefix)
	if errors.Is(err, flag.ErrHelp) {
		c.Help(stdout, fs)
		return flag.ErrHelp
	}
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q", rest[0])
	}
	return nil
}

// Help prints the help: usage, what the command does, every flag with its
// default, how the environment variables are named, and the notes.
func (c Command) Help(w io.Writer, fs *ff.FlagSet) {
	help := ffhelp.Help{ffhelp.NewSection("USAGE", c.Usage)}
	if c.About != "" {
		help = append(help, ffhelp.NewUntitledSection(strings.Split(strings.TrimRight(c.About, "\n"), "\n")...))
	}
	help = append(help, ffhelp.NewFlagsSection(fs))
	example := "--" + settings.Names(fs)[0]
	help = append(help, ffhelp.NewSection("ENVIRONMENT",
		"every flag has a variable: "+c.EnvPrefix+"_ and the flag in upper case, - as _ ("+example+": "+settings.EnvName(c.EnvPrefix, example)+");",
		"a flag given wins over its variable, which wins over the default"))
	if c.Notes != "" {
		help = append(help, ffhelp.NewUntitledSection(strings.Split(strings.TrimRight(c.Notes, "\n"), "\n")...))
	}
	_, _ = help.WriteTo(w)
}

// List is a setting that may be given many times (settings.List).
type List = settings.List
