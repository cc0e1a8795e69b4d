package signature

// Verify checks sig, a signature of body, with every hash k accepts.
func (k Key) Verify(sig, body []byte) error { return k.verify(sig, body) }
