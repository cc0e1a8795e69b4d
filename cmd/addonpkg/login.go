package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/registry"
)

func newLoginCmd(a *app) *cobra.Command {
	var (
		user          string
		passwordStdin bool
	)
	cmd := &cobra.Command{
		Use:   "login REGISTRY",
		Short: "Save credentials for a registry in the docker config",
		Long: `Login checks the credentials against the registry, then saves them where
docker, crane and oras look for them: ~/.docker/config.json (or $DOCKER_CONFIG),
or the credential helper that file names. Wrong credentials save nothing.`,
		Example: `  echo "$TOKEN" | addonpkg login registry.example.com -u ci --password-stdin`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if user == "" {
				return fmt.Errorf("--username is required")
			}
			if !passwordStdin {
				return fmt.Errorf("--password-stdin is required: pass the password on stdin, never on the command line")
			}
			pw, err := readPassword(a.stdin)
			if err != nil {
				return err
			}
			if err := registry.Login(cmd.Context(), args[0], user, pw, a.reg); err != nil {
				return err
			}
			a.infof("Login succeeded: %s", args[0])
			return nil
		},
	}
	cmd.Flags().StringVarP(&user, "username", "u", "", "user name")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from stdin")
	a.addRegistryFlags(cmd)
	return cmd
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

func newLogoutCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "logout REGISTRY",
		Short:   "Remove a registry's saved credentials",
		Example: `  addonpkg logout registry.example.com`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := registry.Logout(args[0]); err != nil {
				return err
			}
			a.infof("Removed credentials for %s", args[0])
			return nil
		},
	}
}
