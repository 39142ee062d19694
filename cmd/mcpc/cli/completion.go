package cli

import (
	"io"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// completionFlag is urfave/cli's request for completions: the shell scripts
// below run `mcpc <words so far> --generate-bash-completion` and offer
// what it prints, one candidate a line.
const completionFlag = "--generate-bash-completion"

func completionCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "completion",
		Usage: "print a shell completion script: bash, zsh or fish",
		UsageText: `mcpc completion bash|zsh|fish

Examples:
   source <(mcpc completion bash)                           # bash, this shell
   mcpc completion zsh > "${fpath[1]}/_mcpc"                 # zsh (then: compinit)
   mcpc completion fish > ~/.config/fish/completions/mcpc.fish`,
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return usageError("completion needs one shell: bash, zsh or fish (mcpc completion bash)")
			}
			return writeCompletion(c.App, c.App.Writer, c.Args().First())
		},
	}
}

// writeCompletion prints the script for shell. Bash and zsh ask mcpc itself
// (urfave/cli's --generate-bash-completion protocol, so the candidates are
// always those of the installed binary); fish gets urfave/cli's static
// script of every command and flag.
func writeCompletion(app *ucli.App, w io.Writer, shell string) error {
	var script string
	switch shell {
	case "bash":
		script = bashCompletion
	case "zsh":
		script = zshCompletion
	case "fish":
		s, err := app.ToFishCompletion()
		if err != nil {
			return &exitError{code: ExitInternal, msg: "fish completion: " + err.Error()}
		}
		script = s
	default:
		return usageError("completion: unknown shell %q; mcpc completes bash, zsh and fish", shell)
	}
	_, err := io.WriteString(w, script)
	return err
}

// completionArgs moves a completion request (the last argument) out of the
// way of interspersed, which reorders flags and would drop it for a
// command with subcommands, and puts it back last, where urfave/cli looks.
func completionArgs(app *ucli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] != completionFlag {
		return interspersed(app, args)
	}
	out := interspersed(app, args[:len(args)-1])
	// After "--" urfave/cli offers nothing: the words are positional.
	for i, a := range out {
		if a == "--" {
			out = out[:i]
			break
		}
	}
	return append(out, completionFlag)
}

// The bash and zsh scripts follow urfave/cli v2's autocomplete/bash_autocomplete
// and zsh_autocomplete (MIT), which the package does not embed, with the
// program name filled in; the bash one also works without the
// bash-completion package.
var bashCompletion = strings.TrimLeft(`
# bash completion for mcpc: source <(mcpc completion bash)
_mcpc_bash_autocomplete() {
  local cur words cword opts
  COMPREPLY=()
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion -n "=:" || return
  else
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
    cur="${COMP_WORDS[COMP_CWORD]}"
  fi
  words=("${words[@]:0:$cword}")
  if [[ "$cur" == "-"* ]]; then
    opts=$("${words[@]}" "${cur}" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}

complete -o bashdefault -o default -o nospace -F _mcpc_bash_autocomplete mcpc
`, "\n")

var zshCompletion = strings.TrimLeft(`
#compdef mcpc
# zsh completion for mcpc: mcpc completion zsh > "${fpath[1]}/_mcpc"

_mcpc() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi

  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}

if [[ "$funcstack[1]" == "_mcpc" ]]; then
  _mcpc "$@"
else
  compdef _mcpc mcpc
fi
`, "\n")
