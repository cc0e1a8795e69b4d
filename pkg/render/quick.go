package render

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unicode/utf8"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// The fast path of SplitDocuments. Parsing every document into a go-yaml
// node tree is most of the cost of validating a large add-on, and almost
// all of that tree is thrown away: SplitDocuments keeps only the object's
// identity and its images. quickDocument reads a document in one pass,
// line by line, without building a tree, and says ok only when it is sure
// of what the slow path (parseDocument, objectOf, imagesOf) would say:
// that the document is empty, or that it is a valid object with this
// identity and these images. Anything else (a construct outside the small
// subset below, an error, a doubt) returns ok=false and SplitDocuments
// asks the slow path, which gives the exact error.
//
// The subset is what Kubernetes manifests and controller-gen CRDs are made
// of: block mappings and sequences (with compact `- key: value` items and
// sequences at their key's indentation), plain, single- and double-quoted
// scalars (multi-line too), literal and folded block scalars without an
// indentation indicator, comments, and flow sequences of scalars and empty
// flow collections on one line. It is a validator for what it accepts: a
// YAML error anywhere in the document means ok=false. It is deliberately
// stricter than go-yaml where the rules get subtle (a quoted scalar's
// continuation lines must be indented, a key may not have spaces before its
// colon, and so on): refusing a valid document only costs time.
//
// Section numbers below refer to the YAML 1.2.2 specification; go-yaml
// (go.yaml.in/yaml/v3, which kyaml uses) follows libyaml, and where the two
// differ the comment says which one the code follows.

// quickDoc is what the fast path learnt of a document.
type quickDoc struct {
	empty  bool // only blank lines and comments
	obj    addon.Object
	images []string // sorted, without duplicates, as imagesOf
}

// quickMaxNodes keeps the fast path below maxExpandedNodes: checkAliases
// refuses a document of more nodes even without aliases.
const quickMaxNodes = maxExpandedNodes - 1000

// quickMaxDepth keeps the fast path well below go-yaml's limit of 10,000
// nested block collections.
const quickMaxDepth = 1000

// quickMaxKey keeps keys below go-yaml's limit on an implicit key: its ':'
// must come at most 1024 characters after its start (section 7.4.2). A byte
// count is never smaller than a character count.
const quickMaxKey = 1000

// quickDocument reads one document, as splitYAML cut it.
func quickDocument(b []byte) (quickDoc, bool) {
	tabs, ok := quickChars(b)
	if !ok {
		return quickDoc{}, false
	}
	var levels [16]quickLevel // deep enough for most documents, without allocating
	s := quickScanner{tabs: tabs, stack: levels[:0]}
	for pos := 0; pos < len(b); {
		line := b[pos:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
			pos += i + 1
		} else {
			pos = len(b)
		}
		if !s.line(line) {
			return quickDoc{}, false
		}
	}
	return s.finish()
}

// quickChars checks every character is one go-yaml reads as printable
// (section 5.1) and is not a line break other than \n (go-yaml also breaks
// lines at \r, NEL, LS and PS): anything else goes to the slow path, which
// refuses control characters and invalid UTF-8. It also says whether the
// document has a tab, which only block scalars may contain here.
func quickChars(b []byte) (tabs, ok bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i := 0; i < len(b); {
		if i+8 <= len(b) {
			// Eight bytes at a time: all ASCII, none below 0x20 (which
			// includes \n, so a word with one takes the slow way), no DEL.
			x := binary.LittleEndian.Uint64(b[i:])
			del := x ^ 0x7f*ones
			if x&highs == 0 && (x-0x20*ones)&^x&highs == 0 && (del-ones)&^del&highs == 0 {
				i += 8
				continue
			}
		}
		for end := min(i+8, len(b)); i < end; {
			c := b[i]
			if c < utf8.RuneSelf {
				switch {
				case c >= 0x20 && c < 0x7f, c == '\n':
				case c == '\t':
					tabs = true
				default:
					return false, false
				}
				i++
				continue
			}
			r, n := utf8.DecodeRune(b[i:])
			switch {
			case r == utf8.RuneError && n == 1, // invalid UTF-8
				r < 0xa0,                 // C1 controls, and NEL
				r == 0x2028, r == 0x2029, // LS, PS
				r == 0xfeff,               // a byte order mark
				r > 0xfffd && r < 0x10000: // non-characters
				return false, false
			}
			i += n
		}
	}
	return tabs, true
}

// A quickLevel is an open block collection.
type quickLevel struct {
	col        int  // its indentation: the column of its keys or its "-"
	seq        bool // a sequence, else a mapping
	indentless bool // a sequence at its key's column (`key:` then `- a`)
	root, meta bool // the document's mapping, or its metadata mapping
	// containers: in a mapping, `image` keys name images; in a sequence,
	// every item is a container (imagesOf's inContainers).
	containers bool
	// pod is how far along its kind's pod spec path (PodSpecPath) this
	// mapping is: 0 off it, 1 the root, k+1 after k keys of the path.
	pod int8
}

// A quickRole says what a key means to objectOf and imagesOf.
type quickRole uint8

const (
	roleOther quickRole = iota
	roleAPIVersion
	roleKind
	roleMetadata
	roleName
	roleNamespace
	roleContainers // containers, initContainers, ephemeralContainers
	roleImage      // image, in a container
)

// identity reports whether the role's value is a field of addon.Object.
func (r quickRole) identity() bool {
	return r == roleAPIVersion || r == roleKind || r == roleName || r == roleNamespace
}

// quickScanner reads a document line by line.
type quickScanner struct {
	tabs  bool
	stack []quickLevel
	nodes int // nodes of the tree go-yaml would build

	// A `key:` or `-` that ended its line: the next line says whether its
	// node is null or a nested collection.
	pending     bool
	pendingItem bool      // a "-", else a "key:"
	pendingRole quickRole // the key's
	pendingKey  []byte    // the key (a slice of the document)

	// unsure: a root key that may start the pod spec path came before
	// apiVersion or kind told the path; the slow path decides.
	unsure bool

	// A plain scalar that more-indented lines may continue.
	cont     bool
	contRole quickRole

	// A quoted scalar that the line did not close.
	quote       byte // ' or ", or 0
	quoteParent int  // the column its continuation lines must exceed

	// A block scalar (section 8.1) whose content may follow.
	block       bool
	blockParent int // the indentation of the collection holding it
	blockIndent int // its content's indentation; 0 until the first non-blank line
	blockBlank  int // the most spaces on its leading blank lines

	seen   [roleNamespace + 1]bool
	obj    addon.Object
	images []string
}

func (s *quickScanner) top() *quickLevel { return &s.stack[len(s.stack)-1] }

// line reads one line, without its \n.
func (s *quickScanner) line(line []byte) bool {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	rest := line[n:]
	if s.block {
		if !s.blockLine(n, rest) {
			return false
		}
		if s.block {
			return true
		}
	}
	if s.tabs && bytes.IndexByte(line, '\t') >= 0 {
		return false // tabs are only safe in block scalar content
	}
	if s.quote != 0 {
		return s.quoteLine(n, rest)
	}
	if len(rest) == 0 {
		return true // blank: a plain scalar continues across it
	}
	if rest[0] == '#' {
		// A comment line; it ends a plain scalar (section 7.3.3: a plain
		// multi-line scalar has no comment lines inside).
		s.cont = false
		return true
	}
	if n == 0 && (bytes.HasPrefix(rest, []byte("---")) || bytes.HasPrefix(rest, []byte("..."))) {
		return false // a document marker, or something close to one
	}
	if s.cont {
		if n > s.top().col {
			// go-yaml continues a plain scalar on any line indented more
			// than the collection holding it.
			return s.contLine(rest)
		}
		s.cont = false
	}
	if len(s.stack) == 0 {
		// The document's first node: a block mapping at column 0, or it is
		// not an object (or not one this path reads).
		if n != 0 || isSeqEntry(rest) {
			return false
		}
		s.stack = append(s.stack, quickLevel{root: true, pod: 1})
		s.nodes = 1
		return s.keyLine(rest)
	}
	if s.pending && !s.resolvePending(n, rest) {
		return false
	}
	for s.top().col > n {
		s.stack = s.stack[:len(s.stack)-1]
	}
	top := s.top()
	if top.indentless && top.col == n && !isSeqEntry(rest) {
		// A key at the column of an indentless sequence ends it.
		s.stack = s.stack[:len(s.stack)-1]
		top = s.top()
	}
	if top.col != n {
		return false // indented like no open collection
	}
	if top.seq {
		if !isSeqEntry(rest) {
			return false
		}
		return s.item(n, rest)
	}
	if isSeqEntry(rest) {
		return false // a "-" where a key belongs
	}
	return s.keyLine(rest)
}

// resolvePending reads the line after a `key:` or `-` that ended its line:
// it opens the nested collection the node is, or the node is null.
func (s *quickScanner) resolvePending(n int, rest []byte) bool {
	s.pending = false
	parent := *s.top()
	role := s.pendingRole
	seq := isSeqEntry(rest)
	// A mapping's value may be a sequence at the key's own column
	// (section 8.2.1: a block-in-block sequence needs no extra indentation
	// when it is a mapping's value).
	indentless := seq && !s.pendingItem && n == parent.col
	if n <= parent.col && !indentless {
		// A null node. objectOf needs the identity fields to be strings.
		return !role.identity() && role != roleMetadata
	}
	if len(s.stack) >= quickMaxDepth || role.identity() {
		return false
	}
	lv := quickLevel{col: n, seq: seq, indentless: indentless}
	switch {
	case s.pendingItem:
		// An item of containers is a container when it is a mapping; a
		// nested sequence is none (imagesOf reads mappings only).
		lv.containers = parent.containers && !seq
	case role == roleMetadata:
		if seq {
			return false
		}
		lv.meta = true
	case role == roleContainers:
		lv.containers = seq
	case !seq && parent.pod > 0:
		lv.pod = s.podStep(parent.pod, s.pendingKey)
	}
	s.stack = append(s.stack, lv)
	return true
}

// item reads a sequence entry, "-" at the sequence's column n.
func (s *quickScanner) item(n int, rest []byte) bool {
	s.nodes++
	i := 1
	for i < len(rest) && rest[i] == ' ' {
		i++
	}
	c := rest[i:]
	if len(c) == 0 || c[0] == '#' {
		s.pending, s.pendingItem, s.pendingRole = true, true, roleOther
		return true
	}
	if isSeqEntry(c) {
		return false // "- - a": not in the subset
	}
	isKey, ok := keyAhead(c)
	if !ok {
		return false
	}
	if !isKey {
		return s.value(roleOther, c)
	}
	// A compact mapping (section 8.2.2: "- key: value"); its keys are at
	// the column of this first one.
	if len(s.stack) >= quickMaxDepth {
		return false
	}
	s.stack = append(s.stack, quickLevel{col: n + i, containers: s.top().containers})
	return s.keyLine(c)
}

// keyAhead says whether a line's content c is an implicit key and its ':'
// (a compact mapping in a sequence entry), or a scalar.
func keyAhead(c []byte) (isKey, ok bool) {
	if c[0] == '\'' || c[0] == '"' {
		end, _, ok := scanQuoted(c, 1, c[0])
		if !ok {
			return false, false
		}
		return end >= 0 && end+1 < len(c) && c[end+1] == ':', true
	}
	_, colon := scanPlain(c)
	return colon, true
}

// keyLine reads `key: value` at the top mapping's column.
func (s *quickScanner) keyLine(c []byte) bool {
	var key, after []byte
	if c[0] == '\'' || c[0] == '"' {
		end, esc, ok := scanQuoted(c, 1, c[0])
		if !ok || end < 0 || esc {
			return false
		}
		key, after = c[1:end], c[end+1:]
	} else {
		end, colon := scanPlain(c)
		if !colon || !plainStart(c) {
			return false
		}
		key, after = c[:end], c[end:]
		if key[len(key)-1] == ' ' || string(key) == "<<" {
			return false // "key : v" (valid, but rare); a merge key
		}
	}
	// The ':' must be followed by a space or the end of the line.
	if len(c)-len(after) >= quickMaxKey || len(after) == 0 || after[0] != ':' || (len(after) > 1 && after[1] != ' ') {
		return false
	}
	s.nodes += 2
	role := s.roleOf(s.top(), key)
	if role != roleOther && role <= roleNamespace {
		if s.seen[role] {
			return false // GetMeta reads the first of duplicate keys
		}
		s.seen[role] = true
	}
	v := after[1:]
	for len(v) > 0 && v[0] == ' ' {
		v = v[1:]
	}
	if len(v) == 0 || v[0] == '#' {
		s.pending, s.pendingItem, s.pendingRole, s.pendingKey = true, false, role, key
		return true
	}
	return s.value(role, v)
}

func (s *quickScanner) roleOf(l *quickLevel, key []byte) quickRole {
	switch string(key) { // the compiler does not copy key to compare it
	case "image":
		if l.containers {
			return roleImage
		}
	case "containers", "initContainers", "ephemeralContainers":
		// Only those of the pod spec of a workload kind (spec 6.2).
		if p := s.podPath(); p != nil && int(l.pod) == len(p)+1 {
			return roleContainers
		}
	case "apiVersion":
		if l.root {
			return roleAPIVersion
		}
	case "kind":
		if l.root {
			return roleKind
		}
	case "items":
		if l.root {
			s.unsure = true // objectOf refuses it
		}
	case "metadata":
		if l.root {
			return roleMetadata
		}
	case "name":
		if l.meta {
			return roleName
		}
	case "namespace":
		if l.meta {
			return roleNamespace
		}
	}
	return roleOther
}

// podPath is the pod spec path of the document's kind, as far as it is
// known yet.
func (s *quickScanner) podPath() []string {
	if !s.seen[roleAPIVersion] || !s.seen[roleKind] {
		return nil
	}
	return PodSpecPath(s.obj.APIVersion, s.obj.Kind)
}

// podStep is the pod field of a mapping opened under key in a mapping
// whose pod field is pod (> 0).
func (s *quickScanner) podStep(pod int8, key []byte) int8 {
	if !s.seen[roleAPIVersion] || !s.seen[roleKind] {
		if pod == 1 && (string(key) == "spec" || string(key) == "template") {
			s.unsure = true
		}
		return 0
	}
	p := PodSpecPath(s.obj.APIVersion, s.obj.Kind)
	if int(pod) <= len(p) && p[pod-1] == string(key) {
		return pod + 1
	}
	return 0
}

// value reads a node that starts on the line after a "key: " or "- ":
// v is the rest of the line, from the node's first character.
func (s *quickScanner) value(role quickRole, v []byte) bool {
	if role == roleMetadata {
		return false // objectOf wants a non-empty mapping: a block one here
	}
	switch v[0] {
	case '|', '>':
		// A block scalar's header (section 8.1.1): chomping "-" or "+",
		// then a comment or nothing. An explicit indentation falls back.
		if role.identity() || role == roleImage {
			return false
		}
		i := 1
		if i < len(v) && (v[i] == '-' || v[i] == '+') {
			i++
		}
		if !tailOK(v[i:]) {
			return false
		}
		s.block, s.blockParent, s.blockIndent, s.blockBlank = true, s.top().col, 0, 0
		return true
	case '\'', '"':
		end, esc, ok := scanQuoted(v, 1, v[0])
		if !ok {
			return false
		}
		if end < 0 {
			// A multi-line quoted scalar.
			if role.identity() || role == roleImage {
				return false
			}
			s.quote, s.quoteParent = v[0], s.top().col
			return true
		}
		if !tailOK(v[end+1:]) {
			return false
		}
		if role.identity() || role == roleImage {
			return !esc && s.scalar(role, v[1:end], true)
		}
		return true
	case '[', '{':
		if role.identity() {
			return false
		}
		items, rest, ok := flowSeq(v)
		if !ok || !tailOK(rest) {
			return false
		}
		s.nodes += items
		return true
	}
	if !plainStart(v) {
		return false
	}
	end, colon := scanPlain(v)
	if colon {
		return false // "a: b: c", or a key where a value belongs
	}
	if role.identity() || role == roleImage {
		if !s.scalar(role, bytes.TrimRight(v[:end], " "), false) {
			return false
		}
	}
	// A comment ends the scalar: nothing may continue it.
	s.cont, s.contRole = end == len(v), role
	return true
}

// scalar records the value of an identity field or an image.
func (s *quickScanner) scalar(role quickRole, v []byte, quoted bool) bool {
	if role == roleImage {
		if len(v) > 0 { // imagesOf skips empty values
			s.images = append(s.images, string(v))
		}
		return true
	}
	if quoted {
		if len(v) == 0 && role != roleNamespace {
			return false
		}
	} else if !plainString(v) {
		return false
	}
	switch role {
	case roleAPIVersion:
		s.obj.APIVersion = string(v)
	case roleKind:
		s.obj.Kind = string(v)
	case roleName:
		s.obj.Name = string(v)
	case roleNamespace:
		s.obj.Namespace = string(v)
	}
	return true
}

// plainString reports whether go-yaml resolves a plain scalar to a string
// rather than null, a boolean or a number (it would give objectOf the
// text, or nothing for null; the fast path does not bother). Refused also:
// YAML 1.1's booleans, which some readers of the manifest still use.
func plainString(v []byte) bool {
	switch v[0] {
	case '+', '-', '.', '~', '<', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return false
	}
	if len(v) > 5 {
		return true
	}
	var low [5]byte
	for i, c := range v {
		low[i] = c | 0x20 // ASCII lower case; other bytes change but cannot match
	}
	switch string(low[:len(v)]) {
	case "null", "true", "false", "yes", "no", "on", "off", "y", "n":
		return false
	}
	return true
}

// contLine reads a continuation line of a plain scalar (section 7.3.3),
// where go-yaml folds the line into the value.
func (s *quickScanner) contLine(rest []byte) bool {
	if s.contRole.identity() || s.contRole == roleImage {
		return false // the fast path reads single-line values only
	}
	// Indicators are text here: go-yaml only looks for ": " and " #".
	end, colon := scanPlain(rest)
	// A ": " makes an implicit key, which cannot span lines; after a
	// comment nothing may continue the scalar: refuse both.
	return !colon && end == len(rest)
}

// quoteLine reads a continuation line of a quoted scalar (section 7.3).
func (s *quickScanner) quoteLine(n int, rest []byte) bool {
	if len(rest) == 0 {
		return true
	}
	// YAML wants the line indented more than the collection; go-yaml does
	// not check, so this is stricter than the slow path.
	if n <= s.quoteParent {
		return false
	}
	end, _, ok := scanQuoted(rest, 0, s.quote)
	if !ok {
		return false
	}
	if end < 0 {
		return true
	}
	s.quote = 0
	return tailOK(rest[end+1:])
}

// blockLine reads a line after a block scalar's header; it clears s.block
// when the line is not the scalar's (section 8.1.1.1: auto-detected
// indentation, the way libyaml does it).
func (s *quickScanner) blockLine(n int, rest []byte) bool {
	tab := len(rest) > 0 && rest[0] == '\t'
	if s.blockIndent == 0 {
		if tab {
			return false // go-yaml: a tab where indentation is expected
		}
		if len(rest) == 0 {
			s.blockBlank = max(s.blockBlank, n)
			return true
		}
		if n <= s.blockParent {
			s.block = false // an empty scalar
			return true
		}
		if s.blockBlank > n {
			return false // leading blank lines more indented than the content
		}
		s.blockIndent = n
		return true
	}
	if len(rest) == 0 || n >= s.blockIndent {
		return true
	}
	if tab {
		return false
	}
	s.block = false
	return true
}

// isSeqEntry reports whether a line's content starts with "-" as a block
// sequence entry (section 8.2.1): followed by a space or nothing.
func isSeqEntry(c []byte) bool {
	return len(c) > 0 && c[0] == '-' && (len(c) == 1 || c[1] == ' ')
}

// plainStart reports whether a plain scalar may start with c (section
// 7.3.3 ns-plain-first, in block context): no indicator, except "-" before
// a non-space. "?" and ":" before a non-space are valid but fall back.
func plainStart(c []byte) bool {
	switch c[0] {
	case '-':
		return len(c) > 1 && c[1] != ' '
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

// scanPlain finds where a plain scalar on one line ends (section 7.3.3, in
// block context): at a ": " or a final ":" (colon is true: the scalar is
// an implicit key), at " #" (a comment), or at the end of the line. end
// includes trailing spaces before a comment.
func scanPlain(c []byte) (end int, colon bool) {
	for i, ch := range c {
		switch {
		case ch == ':' && (i+1 == len(c) || c[i+1] == ' '):
			return i, true
		case ch == '#' && i > 0 && c[i-1] == ' ':
			return i, false
		}
	}
	return len(c), false
}

// scanQuoted finds the closing quote q of a quoted scalar in c, starting at
// from: its index, or -1 if the line ends first. esc reports an escape
// (a doubled single quote, or a backslash), and ok is false for an escape go-yaml refuses
// (section 5.7, plus go-yaml's \' and without \/).
func scanQuoted(c []byte, from int, q byte) (end int, esc, ok bool) {
	for i := from; i < len(c); i++ {
		if q == '\'' {
			j := bytes.IndexByte(c[i:], '\'')
			if j < 0 {
				return -1, esc, true
			}
			i += j
			if i+1 < len(c) && c[i+1] == '\'' {
				esc = true
				i++
				continue
			}
			return i, esc, true
		}
		for i < len(c) && c[i] != '"' && c[i] != '\\' {
			i++
		}
		if i == len(c) {
			return -1, esc, true
		}
		if c[i] == '"' {
			return i, esc, true
		}
		esc = true
		if i+1 == len(c) {
			return -1, esc, true // an escaped line break
		}
		i++
		hex := 0
		switch c[i] {
		case '0', 'a', 'b', 't', 'n', 'v', 'f', 'r', 'e', ' ', '"', '\'', '\\', 'N', '_', 'L', 'P':
		case 'x':
			hex = 2
		case 'u':
			hex = 4
		case 'U':
			hex = 8
		default:
			return 0, esc, false
		}
		if hex > 0 {
			if i+hex >= len(c) {
				return 0, esc, false
			}
			r := 0
			for _, h := range c[i+1 : i+1+hex] {
				d := hexDigit(h)
				if d < 0 {
					return 0, esc, false
				}
				r = r<<4 | d
			}
			if r >= 0xd800 && r <= 0xdfff || r > 0x10ffff {
				return 0, esc, false
			}
			i += hex
		}
	}
	return -1, esc, true
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// flowSeq reads a flow sequence of scalars on one line (section 7.4.1),
// "[a, 'b', "c"]", or an empty flow mapping "{}": items is the number of
// its nodes, rest what follows it. Anything else in flow style (nested
// collections, pairs, multi-line) falls back.
func flowSeq(v []byte) (items int, rest []byte, ok bool) {
	if v[0] == '{' {
		if len(v) < 2 || v[1] != '}' {
			return 0, nil, false
		}
		return 0, v[2:], true
	}
	i := skipSpaces(v, 1)
	if i < len(v) && v[i] == ']' {
		return 0, v[i+1:], true
	}
	for {
		if i >= len(v) {
			return 0, nil, false
		}
		switch c := v[i]; {
		case c == '\'' || c == '"':
			end, _, ok := scanQuoted(v, i+1, c)
			if !ok || end < 0 {
				return 0, nil, false
			}
			i = end + 1
		case flowSafe(c) && c != '-':
			for i < len(v) && flowSafe(v[i]) {
				i++
			}
		default:
			return 0, nil, false
		}
		items++
		i = skipSpaces(v, i)
		if i >= len(v) {
			return 0, nil, false
		}
		switch v[i] {
		case ']':
			return items, v[i+1:], true
		case ',':
			i = skipSpaces(v, i+1)
		default:
			return 0, nil, false
		}
	}
}

// flowSafe reports whether a plain scalar in a flow sequence may hold c:
// letters, digits and "._/-", which no flow rule treats specially.
func flowSafe(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '/' || c == '-'
}

func skipSpaces(v []byte, i int) int {
	for i < len(v) && v[i] == ' ' {
		i++
	}
	return i
}

// tailOK reports whether what follows a node on its line is nothing, or a
// comment after at least one space.
func tailOK(r []byte) bool {
	i := skipSpaces(r, 0)
	return i == len(r) || (i > 0 && r[i] == '#')
}

// finish checks the document as a whole once every line is read.
func (s *quickScanner) finish() (quickDoc, bool) {
	if len(s.stack) == 0 {
		return quickDoc{empty: true}, true
	}
	switch {
	case s.quote != 0, // an unterminated quoted scalar
		s.pending && (s.pendingRole.identity() || s.pendingRole == roleMetadata),
		s.nodes > quickMaxNodes,
		s.unsure,
		s.obj.APIVersion == "", s.obj.Kind == "", s.obj.Name == "":
		return quickDoc{}, false
	}
	slices.Sort(s.images)
	return quickDoc{obj: s.obj, images: slices.Compact(s.images)}, true
}
