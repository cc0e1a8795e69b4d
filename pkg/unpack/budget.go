package unpack

import "sync/atomic"

// memoryBudget bounds the file bytes an unpack with a SpillDir reads into
// memory (Options.MemoryBudget): the layer readers reserve each file's
// size before reading it, and a file that does not fit goes to the spill
// directory instead. What is reserved stays reserved, whether the file
// ends in the tree or not (an upper layer hid it, a later entry replaced
// it): the bound is on what was ever held, which is simple and never
// under-counts.
type memoryBudget struct {
	limit int64 // 0: no budget
	held  atomic.Int64
}

// reserve reports whether size more bytes fit, and takes them if so.
// Without a budget everything fits.
func (m *memoryBudget) reserve(size int64) bool {
	if m.limit <= 0 {
		return true
	}
	if m.held.Add(size) <= m.limit {
		return true
	}
	m.held.Add(-size)
	return false
}

// release gives back a reservation whose bytes were not read after all.
func (m *memoryBudget) release(size int64) {
	if m.limit > 0 {
		m.held.Add(-size)
	}
}
