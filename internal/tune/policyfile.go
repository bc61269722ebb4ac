package tune

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/pipeline"
)

// policyYAML writes a policy file that gives every signal of db the
// policy pols[sig.Index], with comments[i] (if any) as a comment line
// above its rule. head is the file's first comment lines. Each rule sets
// every key a resolved policy keeps (pipeline's Policy.Settings), so that
// a key added to pipeline's table is written without a change here.
// Without comments (a candidate's file, never read by a person) a key is
// left out where the file's defaults give the signal the same value.
func policyYAML(db *dbc.Database, pols []pipeline.Policy, comments []string, head string) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(head, "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(&b, "# %s\n", l)
		}
	}
	b.WriteString(fileDefaults + "rules:\n")
	var at []string
	for _, s := range db.Signals {
		if comments != nil && comments[s.Index] != "" {
			fmt.Fprintf(&b, "  # %s\n", comments[s.Index])
		}
		if comments == nil {
			at = at[:0]
			for _, v := range defaultsFile().Resolve(s).Settings() {
				at = append(at, v)
			}
		}
		writeRule(&b, s, pols[s.Index], at)
	}
	return b.Bytes()
}

// fileDefaults are the defaults of every file policyYAML writes, for the
// signals of other databases if the file is used with one: the built-in
// default's cap and staleness.
const fileDefaults = "defaults:\n  max_rate: 20\n  stale_cycles: 3\n"

// defaultsFile is fileDefaults parsed: what a rule that sets no key
// gives a signal.
var defaultsFile = sync.OnceValue(func() *pipeline.PolicyFile {
	p, err := pipeline.ParsePolicy("defaults", []byte(fileDefaults))
	if err != nil {
		panic(err) // a constant, which every test that writes a file parses
	}
	return p
})

// writeRule writes the rule that gives signal s policy p: every key, or,
// with at (the values, in Settings' order, that the file's defaults give
// s), only those p sets otherwise.
func writeRule(b *bytes.Buffer, s *dbc.Signal, p pipeline.Policy, at []string) {
	fmt.Fprintf(b, "  - match: %s\n", strconv.Quote(escapeGlob(s.FullName())))
	if !p.Publish {
		// Never published: no other key does anything.
		b.WriteString("    publish: false\n")
		return
	}
	i := 0
	for key, v := range p.Settings() {
		if at == nil || v != at[i] {
			fmt.Fprintf(b, "    %s: %s\n", key, v)
		}
		i++
	}
}

// escapeGlob makes name a glob that matches itself only.
func escapeGlob(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// policyFile parses what policyYAML wrote.
func policyFile(name string, text []byte) (*pipeline.PolicyFile, error) {
	p, err := pipeline.ParsePolicy(name, text)
	if err != nil {
		return nil, fmt.Errorf("tune: a policy of the optimizer's: %w", err)
	}
	return p, nil
}
