package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newDocsCmd writes the CLI reference (docs/cli/) from the commands.
func newDocsCmd(root *cobra.Command) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "gen-docs",
		Short:  "Write the Markdown CLI reference",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return genDocs(root, dir)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "docs/cli", "output directory")
	return cmd
}

func genDocs(root *cobra.Command, dir string) error {
	root.DisableAutoGenTag = true
	// cobra adds its completion command only when the CLI runs.
	root.InitDefaultCompletionCmd()
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("write docs to %s: %w", filepath.Clean(dir), err)
	}
	return nil
}
