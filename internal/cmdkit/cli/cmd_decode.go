package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path"
	"runtime"
	"slices"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/cmdkit/decodejob"
	"github.com/yukart/candec/internal/cmdkit/outformat"
	"github.com/yukart/candec/pipeline"
)

func runDecode(ctx context.Context, e Env, args []string) error {
	fs := NewFlags(e, "decode", "--dbc [IFACE=]FILE[,FILE] [flags] CAPTURE|DIR...|-")
	var dbcs dbc.BusFiles
	fs.Var(&dbcs, "dbc", DBCHelp)
	format := fs.String("format", "json", "output format: "+outformat.Help()+"; see docs/decode-output.md and docs/lake.md")
	signals := fs.String("signals", "", "only signals whose name or message.signal matches this glob (comma-separated globs)")
	policy := fs.String("policy", "", "run the publishing policy (YAML; \"default\" for the built-in one) and print the envelopes the service would publish")
	template := fs.String("topic-template", pipeline.DefaultTopicTemplate, "with --policy: topic template")
	window := fs.Bool("window", false, "with --policy: also print the window stream")
	tail := fs.Duration("tail", 0, "with --policy: let time run on this long after the last frame (stale marks, heartbeats); 0 or more")
	skip := fs.Bool("skip-invalid", false, "skip malformed capture lines (counted) instead of stopping; of many captures, skip (and count) one that cannot be read")
	out := fs.String("o", "-", "output `FILE` (- for stdout); written whole under a temporary name, never the capture itself")
	outDir := fs.String("out-dir", "", "write a Parquet data lake to `DIR` (or s3://bucket/prefix, credentials from the AWS variables): a table per message, partitioned message=…/date=… (docs/lake.md)")
	jobs := fs.Int("jobs", runtime.GOMAXPROCS(0), "with --out-dir: captures decoded at once")
	if err := ParseArgs(fs, args, -1, "CAPTURE"); err != nil {
		return err
	}
	// Everything the command line says is checked before the output is
	// created: a mistake must not cost the user an existing file.
	if dbcs.Empty() {
		return &ExitError{2, errors.New("decode: --dbc is required")}
	}
	f, err := decodeFormat(e, *format, *out)
	if err != nil {
		return err
	}
	globs := SplitList(*signals)
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return &ExitError{2, fmt.Errorf("decode: bad --signals glob %q: %v", g, err)}
		}
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	names := fs.Args()
	if err := checkDecodeFlags(set, *policy != "", *outDir, *jobs, *tail, names); err != nil {
		return err
	}
	cfg := decodejob.Config{
		Inputs:      names,
		DBCs:        dbcs,
		Signals:     globs,
		Format:      f,
		Out:         *out,
		OutDir:      *outDir,
		Jobs:        *jobs,
		SkipInvalid: *skip,
		Stdin:       e.Stdin,
		Stdout:      e.Stdout,
		Stderr:      e.Stderr,
		Terminal:    IsTerminal(e.Stderr),
	}
	if *policy != "" {
		cfg.Policy = &decodejob.Policy{File: *policy, PolicyOptions: decodejob.PolicyOptions{Template: *template, Window: *window, Tail: *tail}}
	}
	return decodeStatus(decodejob.Run(ctx, cfg))
}

// decodeFormat looks up the --format named, refusing a binary one bound
// for a terminal.
func decodeFormat(e Env, name, out string) (outformat.Format, error) {
	f, err := outformat.Lookup(name)
	switch {
	case errors.Is(err, outformat.ErrNotInBuild):
		return f, &ExitError{2, fmt.Errorf("decode: --format %s is not in this build (the car's); use the developer's build", name)}
	case err != nil:
		return f, &ExitError{2, fmt.Errorf("decode: unknown --format %q (want %s)", name, outformat.Names())}
	}
	if f.Binary && (out == "-" || out == "") && IsTerminal(e.Stdout) {
		return f, &ExitError{2, fmt.Errorf("decode: --format %s is binary: give -o FILE%s, or redirect standard output", f.Name, f.Ext)}
	}
	return f, nil
}

// checkDecodeFlags refuses flags that do not go together: set holds the
// flags given, policy whether --policy was.
func checkDecodeFlags(set map[string]bool, policy bool, outDir string, jobs int, tail time.Duration, names []string) error {
	if !policy {
		for _, name := range []string{"window", "tail", "topic-template"} {
			if set[name] {
				return &ExitError{2, fmt.Errorf("decode: --%s works only with --policy", name)}
			}
		}
	} else if set["signals"] || set["format"] {
		return &ExitError{2, errors.New("decode: --signals and --format do not apply with --policy (the policy file chooses the signals; the output is envelopes)")}
	}
	if outDir != "" {
		if _, ok := outformat.LakeFormat(); !ok {
			return &ExitError{2, errors.New("decode: --out-dir: no format of this build writes a lake (the car's build has no Parquet); use the developer's build")}
		}
		for _, name := range []string{"o", "format", "policy"} {
			if set[name] {
				return &ExitError{2, fmt.Errorf("decode: --%s does not apply with --out-dir (the lake is its own output)", name)}
			}
		}
	} else if set["jobs"] {
		return &ExitError{2, errors.New("decode: --jobs works only with --out-dir")}
	}
	if jobs < 1 {
		return &ExitError{2, fmt.Errorf("decode: --jobs %d: want 1 or more", jobs)}
	}
	if tail < 0 {
		return &ExitError{2, fmt.Errorf("decode: --tail %s: want 0 or a positive duration", tail)}
	}
	if decodejob.Many(names, outDir) {
		if slices.Contains(names, "-") {
			return &ExitError{2, errors.New("decode: - (stdin) is read alone, not among other captures")}
		}
		if policy {
			return &ExitError{2, errors.New("decode: --policy decodes one capture, as the service sees one stream")}
		}
	}
	return nil
}

// decodeStatus gives a mistake in what the decode was asked for exit
// status 2.
func decodeStatus(err error) error {
	var u *decodejob.UsageError
	if errors.As(err, &u) {
		return &ExitError{2, err}
	}
	return err
}
