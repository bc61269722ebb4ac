package decodejob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/cmdkit/outfile"
	"github.com/yukart/candec/internal/cmdkit/outformat"
)

// Config is what a decode was asked for. The caller checks the command
// line; Run checks what only the inputs can tell.
type Config struct {
	// Inputs are capture files and directories, or "-" alone for Stdin.
	Inputs []string
	// DBCs are the DBC files, for every interface or by interface.
	DBCs dbc.BusFiles
	// Signals are globs of signal names or message.signal; none for
	// every signal.
	Signals []string
	// Format is the output's format (a row of outformat's table); the
	// zero Format is JSON lines.
	Format outformat.Format
	// Out is the output file; "-" or "" for Stdout. Not with OutDir.
	Out string
	// OutDir is the data lake to write into (of the format that writes
	// one: outformat.LakeFormat); "" for none.
	OutDir string
	// Jobs is how many captures are decoded at once into OutDir.
	Jobs int
	// SkipInvalid skips (and counts) malformed capture lines, and of
	// many captures, one that cannot be read.
	SkipInvalid bool
	// Policy, if not nil, runs the one capture through the publishing
	// policy and writes the envelopes the service would publish.
	Policy *Policy
	// Stdin is read for the input "-"; Stdout is the output "-";
	// Stderr gets the summary and the progress line.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Terminal says Stderr is a terminal: a progress line is drawn there.
	Terminal bool
}

// Policy is the publishing policy of a Config.
type Policy struct {
	// File is the policy file (YAML), or "default" for the built-in one.
	File string
	PolicyOptions
}

// UsageError is a mistake in what the decode was asked for (a signal
// glob that matches nothing, a negative tail), as opposed to a failure
// of its inputs or outputs.
type UsageError struct{ Err error }

func (u *UsageError) Error() string { return u.Err.Error() }
func (u *UsageError) Unwrap() error { return u.Err }

// WriteError is a failure to write the output, as opposed to one of
// reading the capture.
type WriteError struct{ Err error }

func (w *WriteError) Error() string { return w.Err.Error() }
func (w *WriteError) Unwrap() error { return w.Err }

// CutError ends a policy run whose capture was not read to its end (a
// malformed line, a read error, an interrupt). The run ended there as
// at the end of a capture, so the envelopes written are whole and are
// those of the capture cut before that point: worth keeping, while the
// error still fails the decode.
type CutError struct {
	Err   error
	Empty bool // no envelope was written
}

func (c *CutError) Error() string { return c.Err.Error() }
func (c *CutError) Unwrap() error { return c.Err }

// Many says whether inputs (with the lake outDir, "" for none) are a
// decode of many captures: more than one, a directory, or into a lake.
func Many(inputs []string, outDir string) bool {
	if len(inputs) > 1 || outDir != "" {
		return true
	}
	if len(inputs) == 1 && inputs[0] != "-" {
		if fi, err := os.Stat(inputs[0]); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// inputs lists every input file named, which the output must not be.
func (c *Config) inputs() []string {
	policy := ""
	if c.Policy != nil {
		policy = c.Policy.File
	}
	return append(append([]string{policy}, c.Inputs...), c.DBCs.Files()...)
}

// Run loads the DBCs and decodes the inputs to the output, writing a
// summary to Stderr. What was decoded before a malformed line or the
// end of ctx is kept; the error still says why the decode stopped.
func Run(ctx context.Context, cfg Config) error {
	if len(cfg.Inputs) == 0 {
		return &UsageError{errors.New("decode: no capture given")}
	}
	if cfg.Format.New == nil {
		f, err := outformat.Lookup("json")
		if err != nil {
			return err
		}
		cfg.Format = f
	}
	if _, ok := outformat.LakeFormat(); cfg.OutDir != "" && !ok {
		return &UsageError{errors.New("decode: no format of this build writes a lake (the car's build has no Parquet); use the developer's build")}
	}
	// Every input is checked before the output is created. The DBCs
	// are read whole, as they always were: an interrupt is seen once
	// the decode runs.
	var (
		pol *Selector    // with a policy: one database, as the service
		sel *busDecoders // without: a Router
		err error
	)
	if cfg.Policy != nil {
		pol, err = newPolicySelector(context.WithoutCancel(ctx), cfg.DBCs)
	} else {
		sel, err = newBusDecoders(context.WithoutCancel(ctx), cfg.DBCs, cfg.Signals)
	}
	if err != nil {
		return err
	}
	if Many(cfg.Inputs, cfg.OutDir) {
		if cfg.Policy != nil {
			return &UsageError{errors.New("decode: --policy decodes one capture, as the service sees one stream")}
		}
		return decodeMany(ctx, &cfg, sel)
	}
	return decodeOne(ctx, &cfg, pol, sel)
}

// newPolicySelector loads the DBCs of a policy run.
func newPolicySelector(ctx context.Context, spec dbc.BusFiles) (*Selector, error) {
	b, err := dbc.LoadBuses(ctx, spec)
	if err != nil {
		return nil, err
	}
	s, err := NewSelector(b)
	if err != nil {
		return nil, fmt.Errorf("decode: --policy: %w", err)
	}
	return s, nil
}

// decodeOne decodes the one capture (or stdin) of cfg.
func decodeOne(ctx context.Context, cfg *Config, pol *Selector, sel *busDecoders) error {
	name := cfg.Inputs[0]
	shown := name
	if name == "-" {
		shown = "stdin"
	}
	var lines flusher // value lines, flushed whenever a live input would wait
	in, err := openInput(ctx, cfg.Stdin, name, func() {
		if lines != nil {
			lines.Flush()
		}
	})
	if err != nil {
		return err
	}
	defer in.close()
	// The head of the capture shows its format (on a pipe, the first
	// line is enough), before the output is created.
	src, err := capture.NewSource(in.source(), capture.Options{SkipInvalid: cfg.SkipInvalid})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("decode %s: interrupted after 0 frames: %w", shown, ctx.Err())
		}
		return fmt.Errorf("decode %s: %w", shown, err)
	}
	of, err := outfile.Create(cfg.Out, cfg.Stdout, cfg.inputs()...)
	if err != nil {
		return fmt.Errorf("decode: -o: %w", err)
	}
	defer of.Abort()

	if cfg.Policy != nil {
		return decodePolicy(ctx, cfg, pol, src, of, shown)
	}

	sink, err := cfg.Format.New(of, func() (string, error) { return cfg.DBCs.Hash(context.WithoutCancel(ctx)) })
	if err != nil {
		return err
	}
	lines, _ = sink.(flusher)
	bar := newDecodeProgress(cfg.Stderr, cfg.Terminal, shown, in.size)
	derr := decodeCapture(ctx, shown, src, sel, sink.Write, func(frames int64) { bar.update(frames, in) })
	bar.done()
	var werr *WriteError
	if errors.As(derr, &werr) {
		return derr // the output is broken: keep the file that was there
	}
	if derr != nil && sink.Lines() == 0 {
		return derr // nothing decoded: an empty file would only replace the one there
	}
	// What was decoded before a bad line or an interrupt is whole lines
	// (or a whole Parquet file of them) and is kept (committed), so no
	// good output is lost; the error still ends the decode with an
	// error.
	if err := sink.Close(); err != nil {
		return fmt.Errorf("decode: write %s: %w", of.Name(), err)
	}
	if err := of.Commit(); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if serr := sel.summary(cfg.Stderr, shown, sink.Truncated()); derr == nil {
		derr = serr
	}
	return derr
}

// decodePolicy runs the capture src (shown as shown) through the
// policy of cfg into of.
func decodePolicy(ctx context.Context, cfg *Config, pol *Selector, src capture.Source, of *outfile.File, shown string) error {
	file := cfg.Policy.File
	if file == "default" {
		file = ""
	}
	opts := cfg.Policy.PolicyOptions
	opts.Name = shown
	in := pol.Source(src)
	derr := RunPolicy(ctx, of, cfg.Stderr, pol.DB, file, in, opts)
	var cut *CutError
	if derr != nil && (!errors.As(derr, &cut) || cut.Empty) {
		return derr // nothing to keep (or a broken output): the file that was there stays
	}
	// The envelopes before a bad line or an interrupt are whole and are
	// kept, as in the plain decode, and so are those of a capture that
	// lacked an interface --dbc names; the error still ends the decode
	// with an error.
	if err := of.Commit(); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if ferr := in.Finish(cfg.Stderr, "decode", "candec decode: ", shown); derr == nil {
		derr = ferr
	}
	return derr
}

// flusher is a sink that can write what it buffers at any time, ending
// with a whole line: value lines (valuelog.Writer), which a live input
// flushes whenever it would wait.
type flusher interface{ Flush() error }

// decodeCapture decodes the frames of r to write until the end of the
// capture, a malformed line (unless skipped), a write error or the end
// of ctx. tick (if not nil) is called every 4096 frames with the count
// so far.
func decodeCapture(ctx context.Context, name string, r capture.Source, sel *busDecoders, write func(*frame.Frame, string, []decoder.Value) error, tick func(int64)) error {
	defer func() { sel.skipped = r.Skipped() }()
	var fr frame.Frame
	for {
		if err := r.Next(&fr); err != nil {
			var le *capture.LineError
			switch {
			case errors.Is(err, io.EOF):
				return nil
			case ctx.Err() != nil:
				return fmt.Errorf("decode %s: interrupted after %d frames: %w", name, sel.frames, ctx.Err())
			case errors.As(err, &le):
				return fmt.Errorf("decode: %s:%d: %s: %q", name, le.Line, le.Msg, le.Text)
			}
			return fmt.Errorf("decode %s: %w", name, err)
		}
		if sel.frames++; sel.frames&0xFFF == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("decode %s: interrupted after %d frames: %w", name, sel.frames, err)
			}
			if tick != nil {
				tick(sel.frames)
			}
		}
		vals, ok := sel.Decode(&fr, r)
		if !ok {
			continue
		}
		if err := write(&fr, r.Interface(fr.Bus), vals); err != nil {
			return &WriteError{fmt.Errorf("decode: write: %w", err)}
		}
	}
}
