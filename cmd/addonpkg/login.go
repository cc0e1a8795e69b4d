package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

func newLoginCmd(a *app) *cobra.Command {
	var (
		user                  string
		passwordStdin, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "login REGISTRY",
		Short: "Save credentials for a registry in the docker config",
		Long: `Login checks the credentials against the registry, then saves them where
docker, crane and oras look for them: ~/.docker/config.json (or $DOCKER_CONFIG),
or the credential helper that file names. Wrong credentials save nothing.

On a terminal, login asks for the user name (unless -u is given) and the
password, without echoing it. Elsewhere (scripts, CI) the password comes
from stdin with --password-stdin; it is never taken on the command line.`,
		Example: `  echo "$TOKEN" | addonpkg login registry.example.com -u ci --password-stdin
  addonpkg login registry.example.com -u me`,
		Args: exactArgs("REGISTRY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var (
				pw  string
				err error
			)
			tty, onTerminal := terminalIn(a.stdin)
			switch {
			case passwordStdin:
				if user == "" {
					return &usageError{cmd: cmd, msg: "--username is required with --password-stdin"}
				}
				if pw, err = readPassword(a.stdin); err != nil {
					return err
				}
			case onTerminal:
				if user, pw, err = prompt(tty, a.stderr, user); err != nil {
					return err
				}
			default:
				return fmt.Errorf("no terminal to ask for the password: pass it with --password-stdin (and -u USER), never on the command line")
			}
			if err := registry.Login(cmd.Context(), args[0], user, pw, a.reg); err != nil {
				return err
			}
			a.infof("login succeeded: %s", safetree.Sanitize(args[0]))
			return a.printLogin(loginResult{Registry: args[0], Username: user, LoggedIn: true}, asJSON)
		},
	}
	cmd.Flags().StringVarP(&user, "username", "u", "", "user name")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from stdin")
	addJSONFlag(cmd, &asJSON, "the registry and user name saved")
	addQuietFlag(cmd, &a.quiet, "note of the login (the prompts on a terminal stay)")
	a.addRegistryFlags(cmd)
	return cmd
}

// terminalIn is stdin as a terminal, if it is one.
func terminalIn(r io.Reader) (*os.File, bool) {
	f, ok := r.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, false
	}
	return f, true
}

// prompt asks for the user name (unless given) and the password on the
// terminal, the password without echo.
func prompt(tty *os.File, w io.Writer, user string) (string, string, error) {
	if user == "" {
		fmt.Fprint(w, "Username: ")
		line, err := bufio.NewReader(io.LimitReader(tty, 4<<10)).ReadString('\n')
		if err != nil && err != io.EOF {
			return "", "", fmt.Errorf("read user name: %w", err)
		}
		if user = strings.TrimSpace(line); user == "" {
			return "", "", fmt.Errorf("empty user name")
		}
	}
	fmt.Fprint(w, "Password: ")
	b, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(w)
	if err != nil {
		return "", "", fmt.Errorf("read password: %w", err)
	}
	if len(b) == 0 {
		return "", "", fmt.Errorf("empty password")
	}
	return user, string(b), nil
}

func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 64<<10)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", fmt.Errorf("empty password on stdin")
	}
	return pw, nil
}

// loginResult is login's and logout's --json: the registry as given,
// the user name saved (login), and whether credentials are saved now.
// logout's Removed says whether there were any to remove: logging out
// of a registry with none is no failure, and a script can still tell.
type loginResult struct {
	Registry string `json:"registry"`
	Username string `json:"username,omitempty"`
	LoggedIn bool   `json:"loggedIn"`
	Removed  *bool  `json:"removed,omitempty"`
}

// printLogin prints r with --json; without it, login and logout print
// nothing on stdout (their note is on stderr).
func (a *app) printLogin(r loginResult, asJSON bool) error {
	if !asJSON {
		return nil
	}
	return a.printJSON(r)
}

func newLogoutCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "logout REGISTRY",
		Short: "Remove a registry's saved credentials",
		Long: `Logout removes the credentials saved for REGISTRY. A registry with no saved
credentials is a note, not a failure (exit 0), as with docker logout: the
end state, no credentials, is the one asked for.`,
		Example: `  addonpkg logout registry.example.com`,
		Args:    exactArgs("REGISTRY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := registry.Logout(args[0])
			removed := err == nil
			switch {
			case errors.Is(err, registry.ErrNotLoggedIn):
				a.infof("not logged in to %s", safetree.Sanitize(args[0]))
			case err != nil:
				return err
			default:
				a.infof("removed credentials for %s", safetree.Sanitize(args[0]))
			}
			return a.printLogin(loginResult{Registry: args[0], Removed: &removed}, asJSON)
		},
	}
	addJSONFlag(cmd, &asJSON, "the registry and whether credentials were removed")
	addQuietFlag(cmd, &a.quiet, "notes (credentials removed, or none to remove)")
	return cmd
}
