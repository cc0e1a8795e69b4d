//go:build !unix

package folder

// openFlags: no FIFOs to guard against.
const openFlags = 0
