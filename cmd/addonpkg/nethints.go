package main

import (
	"context"
	"errors"

	"github.com/addonpkg/addonpkg/pkg/netguard"
)

// flagHint names the flag that changes what an error ran into: the
// library's errors are typed and know no flag names.
func flagHint(err error) string {
	switch {
	case errors.Is(err, netguard.ErrIdleTimeout), errors.Is(err, context.DeadlineExceeded):
		return " (raise it with --timeout)"
	}
	return ""
}
