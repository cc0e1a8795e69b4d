package archive

import "io"

// XzDecoders decodes the xz file b, as DecompressArchive does but
// without its bound on LZMA2 chunks (to measure what it bounds), and
// says how many LZMA2 decoders the reader made.
func XzDecoders(b []byte) (out []byte, decoders int, err error) {
	r := &byteReaderAt{b}
	if err := walkXzBudget(r, int64(len(b)), MaxDecoderWindow, nil); err != nil {
		return nil, 0, err
	}
	z := newXzReader(r, int64(len(b)))
	out, err = io.ReadAll(z)
	return out, z.decoders, err
}

type byteReaderAt struct{ b []byte }

func (r *byteReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.b)) {
		return 0, io.EOF
	}
	n := copy(p, r.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
