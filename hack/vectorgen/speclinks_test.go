package vectorgen_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/hack/vectorgen"
)

// specBlock is a paragraph or list item of spec/addon-v1.md.
type specBlock struct {
	section string // "4.4", "5", ...
	text    string
	// lead is the paragraph that introduces the list holding this item
	// ("For every tar entry of every layer, readers MUST:").
	lead string
}

var (
	headingRE = regexp.MustCompile(`^#{2,3} (\d+(?:\.\d+)?)\.? `)
	itemRE    = regexp.MustCompile(`^(?:- |\d+\. )`)
	tagRE     = regexp.MustCompile(`\*\(vectors: ([^)]*)\)\*`)
	noTagRE   = regexp.MustCompile(`\*\(no vector: [^)]+\)\*`)
	mustRE    = regexp.MustCompile(`\b(MUST|REQUIRED|SHALL)\b`)
	readerRE  = regexp.MustCompile(`(?i)\breaders?\b`)
	writerRE  = regexp.MustCompile(`(?i)\bwriters?\b`)
)

// specBlocks splits the spec into paragraphs and list items, skipping
// code blocks, tables and headings.
func specBlocks(t *testing.T) []specBlock {
	t.Helper()
	b, err := os.ReadFile("../../spec/addon-v1.md")
	if err != nil {
		t.Fatal(err)
	}
	var (
		out            []specBlock
		section, lead  string
		cur            []string
		curItem, fence bool
		lastPara       string
	)
	flush := func() {
		if len(cur) == 0 {
			return
		}
		text := strings.Join(cur, " ")
		blk := specBlock{section: section, text: text}
		if curItem {
			blk.lead = lead
		} else {
			lastPara = text
		}
		out = append(out, blk)
		cur, curItem = nil, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			flush()
			fence = !fence
			continue
		case fence:
			continue
		case headingRE.MatchString(line):
			flush()
			section, lead, lastPara = headingRE.FindStringSubmatch(line)[1], "", ""
			continue
		case strings.HasPrefix(line, "#"), strings.HasPrefix(line, "|"):
			flush()
			continue
		case strings.TrimSpace(line) == "":
			flush()
			continue
		case itemRE.MatchString(line):
			if !curItem {
				// The first item of a list: the paragraph before it leads it.
				flush()
				lead = lastPara
			} else {
				flush()
			}
			curItem = true
			cur = append(cur, line)
			continue
		}
		if curItem && !strings.HasPrefix(line, " ") {
			flush()
		}
		cur = append(cur, strings.TrimSpace(line))
	}
	flush()
	return out
}

// isReaderRule: a block with a requirement keyword that is about readers,
// itself or through the sentence that leads its list.
func isReaderRule(b specBlock) bool {
	if strings.HasSuffix(b.text, ":") {
		return false // it leads a list: its items are the rules
	}
	if tagRE.MatchString(b.lead) || noTagRE.MatchString(b.lead) {
		return false // the list's lead names the vectors of its items
	}
	if !mustRE.MatchString(b.text) && !(b.lead != "" && mustRE.MatchString(b.lead) && readerRE.MatchString(b.lead)) {
		return false
	}
	if readerRE.MatchString(b.text) {
		return true
	}
	return b.lead != "" && readerRE.MatchString(b.lead) && !writerRE.MatchString(b.lead)
}

// Every normative reader rule of spec/addon-v1.md names the vectors that
// pin it (or says why none can), every name is a vector, and every
// vector is named by a rule of the section its README line gives.
func TestSpecRulesNameVectors(t *testing.T) {
	pins := map[string]string{}
	for _, p := range vectorgen.Pins() {
		sec, _, _ := strings.Cut(p.Section, " ")
		pins[p.Vector] = sec
	}
	namedIn := map[string][]string{} // vector -> sections naming it
	rules := 0
	for _, b := range specBlocks(t) {
		tags := tagRE.FindAllStringSubmatch(b.text, -1)
		for _, tg := range tags {
			for _, name := range strings.Split(tg[1], ",") {
				name = strings.Trim(strings.TrimSpace(name), "`")
				if _, ok := pins[name]; !ok {
					t.Errorf("section %s names vector %q, which the generator does not make: %.80s...", b.section, name, b.text)
				}
				namedIn[name] = append(namedIn[name], b.section)
			}
		}
		if isReaderRule(b) {
			rules++
			if len(tags) == 0 && !noTagRE.MatchString(b.text) {
				t.Errorf("section %s: a reader rule names no vector: %.120s...", b.section, b.text)
			}
		}
	}
	if rules < 30 {
		t.Errorf("found only %d reader rules: the spec parser is broken", rules)
	}
	for name, sec := range pins {
		secs := namedIn[name]
		if len(secs) == 0 {
			t.Errorf("vector %s is named by no rule of spec/addon-v1.md", name)
			continue
		}
		found := false
		for _, s := range secs {
			found = found || s == sec
		}
		if !found {
			t.Errorf("vector %s pins section %s (its README.md), but is named in sections %v", name, sec, secs)
		}
	}
}
