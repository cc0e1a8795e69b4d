//go:build !race

package unpack_test

const raceEnabled = false
