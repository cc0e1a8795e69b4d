package addon

import "errors"

// ErrUnsupportedVersion marks a config document whose specVersion this
// package does not read (spec/addon-v1.md sections 6.5 and 12).
var ErrUnsupportedVersion = errors.New("unsupported specVersion")
