package addon

import "errors"

// ErrUnsupportedVersion marks a config document whose specVersion this
// package does not read (spec/addon-v1.md sections 6.5 and 12).
var ErrUnsupportedVersion = errors.New("unsupported specVersion")

// ErrHelmChart marks an attempt to render a Helm chart: its templates are
// Helm's to render (helm template), not addonpkg's. Its files unpack like
// any add-on's.
var ErrHelmChart = errors.New("a Helm chart")

// ErrEmptyConfig marks a config document with nothing in it (no bytes,
// null, {}): a tool wrote its default config under the add-on's config
// media type, and there is no add-on metadata to read, not even a name.
var ErrEmptyConfig = errors.New("add-on config is empty: it holds no add-on metadata (not even a name)")
