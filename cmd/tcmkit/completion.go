package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/settings"
	"github.com/tcmkit/tcmkit/simulator/clients"
	"github.com/tcmkit/tcmkit/simulator/mutants"
)

const completionAbout = "Prints a shell's completion script: tcmkit completion bash|zsh|fish."

const completionUsage = `USAGE
  tcmkit completion bash|zsh|fish

Prints the script that completes tcmkit's commands, their flags, and the
names of faults and scenarios. To use it now, or at every start:
  bash:  source <(tcmkit completion bash)     echo 'source <(tcmkit completion bash)' >> ~/.bashrc
  zsh:   source <(tcmkit completion zsh)      echo 'source <(tcmkit completion zsh)' >> ~/.zshrc
  fish:  tcmkit completion fish | source      tcmkit completion fish > ~/.config/fish/completions/tcmkit.fish
`

// completion is the completion command.
func completion(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, completionUsage)
		return 0
	}
	if len(args) != 1 {
		fmt.Fprintf(stderr, "%s: want one shell: bash, zsh or fish (%s --help)\n", name, name)
		return 2
	}
	words := completionWords(ctx)
	switch args[0] {
	case "bash":
		fmt.Fprint(stdout, bashScript(words))
	case "zsh":
		// zsh runs bash's completion functions through bashcompinit.
		fmt.Fprint(stdout, "# zsh completion for tcmkit: source <(tcmkit completion zsh)\nautoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n"+bashScript(words))
	case "fish":
		fmt.Fprint(stdout, fishScript(words))
	default:
		hint := ""
		if s := settings.Suggest(args[0], []string{"bash", "zsh", "fish"}); s != "" {
			hint = " (did you mean " + s + "?)"
		}
		fmt.Fprintf(stderr, "%s: unknown shell %q%s: bash, zsh or fish\n", name, args[0], hint)
		return 2
	}
	return 0
}

// words are what the scripts complete: the commands with what they do,
// each command's flags (read from its own help, so they never drift), and
// the values of the flags that name a fault or a scenario.
type words struct {
	commands []subcommand
	flags    map[string][]string
	values   map[string][]string // flag → its values
}

var flagInHelp = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z][a-z0-9-]*)`)

func completionWords(ctx context.Context) words {
	w := words{commands: subcommands, flags: map[string][]string{}, values: map[string][]string{}}
	for _, c := range subcommands {
		if c.name == "completion" {
			w.flags[c.name] = nil
			continue
		}
		var help strings.Builder
		c.run(ctx, "tcmkit "+c.name, []string{"--help"}, &help, io.Discard)
		var flags []string
		for _, m := range flagInHelp.FindAllStringSubmatch(help.String(), -1) {
			if !slices.Contains(flags, "--"+m[1]) {
				flags = append(flags, "--"+m[1])
			}
		}
		w.flags[c.name] = flags
	}
	w.values["--fault"] = mutants.Names()
	w.values["--faults"] = mutants.Names()
	for _, sc := range clients.Scenarios() {
		w.values["--scenario"] = append(w.values["--scenario"], sc.Name)
	}
	return w
}

func (w words) names() []string {
	var names []string
	for _, c := range w.commands {
		names = append(names, c.name)
	}
	return append(names, "help")
}

func bashScript(w words) string {
	var b strings.Builder
	b.WriteString("# bash completion for tcmkit: source <(tcmkit completion bash)\n")
	b.WriteString("_tcmkit() {\n\tlocal cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n")
	fmt.Fprintf(&b, "\tif ((COMP_CWORD == 1)); then\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n\t\treturn\n\tfi\n", strings.Join(w.names(), " "))
	b.WriteString("\tcase \"$prev\" in\n")
	// Flags with the same values share a case (--fault|--faults).
	byValues := map[string][]string{}
	var order []string
	for _, f := range sortedKeys(w.values) {
		v := strings.Join(w.values[f], " ")
		if byValues[v] == nil {
			order = append(order, v)
		}
		byValues[v] = append(byValues[v], f)
	}
	for _, v := range order {
		fmt.Fprintf(&b, "\t%s)\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n\t\treturn\n\t\t;;\n", strings.Join(byValues[v], "|"), v)
	}
	b.WriteString("\tesac\n\tcase \"${COMP_WORDS[1]}\" in\n")
	for _, c := range w.commands {
		list := strings.Join(w.flags[c.name], " ")
		if c.name == "completion" {
			list = "bash zsh fish"
		}
		fmt.Fprintf(&b, "\t%s)\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n\t\t;;\n", c.name, list)
	}
	fmt.Fprintf(&b, "\thelp)\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n\t\t;;\n", strings.Join(w.names()[:len(w.commands)], " "))
	b.WriteString("\tesac\n}\ncomplete -o default -F _tcmkit tcmkit\n")
	return b.String()
}

func fishScript(w words) string {
	var b strings.Builder
	b.WriteString("# fish completion for tcmkit: tcmkit completion fish | source\ncomplete -c tcmkit -f\n")
	for _, c := range w.commands {
		fmt.Fprintf(&b, "complete -c tcmkit -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.about))
	}
	b.WriteString("complete -c tcmkit -n __fish_use_subcommand -a help -d 'Prints a command\\'s help'\n")
	for _, c := range w.commands {
		if c.name == "completion" {
			fmt.Fprintf(&b, "complete -c tcmkit -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
			continue
		}
		for _, f := range w.flags[c.name] {
			values := ""
			if v, ok := w.values[f]; ok {
				values = " -x -a " + fishQuote(strings.Join(v, " "))
			}
			fmt.Fprintf(&b, "complete -c tcmkit -n '__fish_seen_subcommand_from %s' -l %s%s\n", c.name, strings.TrimPrefix(f, "--"), values)
		}
	}
	return b.String()
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
