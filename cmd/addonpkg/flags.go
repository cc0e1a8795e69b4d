package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/source"
)

// The flags many commands share are declared here, once, so that their
// names, defaults, help and completion cannot drift apart.

// addJSONFlag adds --json; what says what the command prints.
func addJSONFlag(cmd *cobra.Command, v *bool, what string) {
	cmd.Flags().BoolVar(v, "json", false, "print "+what+" as JSON")
}

// addPullFlag adds --pull, the local store's policy for registry
// references (source.PullMissing, PullAlways, PullNever).
func addPullFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "pull", source.PullMissing, "for REGISTRY/REPO references: missing (a copy in the local store wins), always or never read the registry")
	_ = cmd.RegisterFlagCompletionFunc("pull", fixedCompletion(source.PullMissing, source.PullAlways, source.PullNever))
}

// addPlatformFlag adds --platform, the image picked from an index;
// fromEnv makes $ADDON_PLATFORM its default.
func addPlatformFlag(cmd *cobra.Command, v *string, fromEnv bool) {
	help, def := "platform to pick from an index, os/arch[/variant]", ""
	if fromEnv {
		help, def = help+" (default $ADDON_PLATFORM)", os.Getenv("ADDON_PLATFORM")
	}
	cmd.Flags().StringVar(v, "platform", def, help)
	_ = cmd.RegisterFlagCompletionFunc("platform", fixedCompletion("linux/amd64", "linux/arm64", "linux/arm/v7", "linux/ppc64le", "linux/s390x"))
}
