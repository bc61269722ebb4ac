package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/lake"
	"github.com/yukart/candec/internal/outfile"
	"github.com/yukart/candec/internal/progress"
	"github.com/yukart/candec/internal/valuelog"
	"github.com/yukart/candec/pipeline"
)

// dbcFlag collects --dbc values: "FILE[,FILE]" for every interface, or
// "IFACE=FILE[,FILE]" for one interface of a multi-bus capture.
type dbcFlag struct {
	all   []string
	iface map[string][]string
}

func (d *dbcFlag) String() string { return "" }

func (d *dbcFlag) Set(v string) error {
	name, files, ok := strings.Cut(v, "=")
	if !ok {
		d.all = append(d.all, splitList(v)...)
		return nil
	}
	if name == "" || files == "" {
		return fmt.Errorf("want IFACE=FILE[,FILE], got %q", v)
	}
	if d.iface == nil {
		d.iface = map[string][]string{}
	}
	d.iface[name] = append(d.iface[name], splitList(files)...)
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runDecode(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "decode", "--dbc [IFACE=]FILE[,FILE] [flags] CAPTURE|DIR...|-")
	var dbcs dbcFlag
	fs.Var(&dbcs, "dbc", "DBC `[IFACE=]FILE[,FILE]`: files for every interface, or with IFACE= for one interface (repeatable)")
	format := fs.String("format", "json", "output format: json (JSON lines), csv or parquet (long form, needs -o); see docs/decode-output.md and docs/lake.md")
	signals := fs.String("signals", "", "only signals whose name or message.signal matches this glob (comma-separated globs)")
	policy := fs.String("policy", "", "run the publishing policy (YAML; \"default\" for the built-in one) and print the envelopes the service would publish")
	template := fs.String("topic-template", pipeline.DefaultTopicTemplate, "with --policy: topic template")
	window := fs.Bool("window", false, "with --policy: also print the window stream")
	tail := fs.Duration("tail", 0, "with --policy: let time run on this long after the last frame (stale marks, heartbeats); 0 or more")
	skip := fs.Bool("skip-invalid", false, "skip malformed capture lines (counted) instead of stopping; of many captures, skip (and count) one that cannot be read")
	out := fs.String("o", "-", "output `FILE` (- for stdout); written whole under a temporary name, never the capture itself")
	outDir := fs.String("out-dir", "", "write a Parquet data lake to `DIR`: a table per message, partitioned message=…/date=… (docs/lake.md)")
	jobs := fs.Int("jobs", runtime.GOMAXPROCS(0), "with --out-dir: captures decoded at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkArgs(fs, -1, "CAPTURE"); err != nil {
		return err
	}
	// Everything the command line says is checked before the output is
	// created: a mistake must not cost the user an existing file.
	if len(dbcs.all) == 0 && len(dbcs.iface) == 0 {
		return &exitError{2, errors.New("decode: --dbc is required")}
	}
	var f valuelog.Format
	parquetOut := *format == "parquet"
	if !parquetOut {
		var ok bool
		if f, ok = valuelog.ParseFormat(*format); !ok {
			return &exitError{2, fmt.Errorf("decode: unknown --format %q (want json, csv or parquet)", *format)}
		}
	}
	globs := splitList(*signals)
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return &exitError{2, fmt.Errorf("decode: bad --signals glob %q: %v", g, err)}
		}
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if *policy == "" {
		for _, name := range []string{"window", "tail", "topic-template"} {
			if set[name] {
				return &exitError{2, fmt.Errorf("decode: --%s works only with --policy", name)}
			}
		}
	} else if set["signals"] || set["format"] {
		return &exitError{2, errors.New("decode: --signals and --format do not apply with --policy (the policy file chooses the signals; the output is envelopes)")}
	}
	if *outDir != "" {
		for _, name := range []string{"o", "format", "policy"} {
			if set[name] {
				return &exitError{2, fmt.Errorf("decode: --%s does not apply with --out-dir (the lake is its own output)", name)}
			}
		}
	} else if set["jobs"] {
		return &exitError{2, errors.New("decode: --jobs works only with --out-dir")}
	}
	if *jobs < 1 {
		return &exitError{2, fmt.Errorf("decode: --jobs %d: want 1 or more", *jobs)}
	}
	if *tail < 0 {
		return &exitError{2, fmt.Errorf("decode: --tail %s: want 0 or a positive duration", *tail)}
	}
	names := fs.Args()
	many := len(names) > 1 || *outDir != ""
	if !many && names[0] != "-" {
		if fi, err := os.Stat(names[0]); err == nil && fi.IsDir() {
			many = true
		}
	}
	if many {
		if slices.Contains(names, "-") {
			return &exitError{2, errors.New("decode: - (stdin) is read alone, not among other captures")}
		}
		if *policy != "" {
			return &exitError{2, errors.New("decode: --policy decodes one capture, as the service sees one stream")}
		}
	}
	if parquetOut && *out == "-" {
		if f, ok := e.stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return &exitError{2, errors.New("decode: --format parquet writes a binary file: give -o FILE")}
		}
	}
	name := names[0]
	shown := name
	if name == "-" {
		shown = "stdin"
	}
	inputs := append(append([]string{*policy}, names...), dbcs.files()...)

	// Every input is checked before the output is created.
	var (
		db  *dbc.Database // with --policy: one set of DBCs, as the service
		sel *busDecoders  // without: per-interface DBCs
		err error
	)
	if *policy != "" {
		if len(dbcs.iface) > 0 {
			return &exitError{2, errors.New("decode: --policy takes one set of DBC files for all interfaces, as the service does")}
		}
		db, err = dbc.Load(dbcs.all...)
	} else {
		sel, err = newBusDecoders(dbcs, globs)
	}
	if err != nil {
		return err
	}
	if many {
		opts := manyOptions{outDir: *outDir, out: *out, format: f, parquet: parquetOut, jobs: *jobs,
			skip: *skip, globs: globs, inputs: inputs}
		return decodeMany(ctx, e, names, sel, opts)
	}
	var vw *valuelog.Writer
	in, err := openInput(ctx, e, name, func() {
		if vw != nil {
			vw.Flush()
		}
	})
	if err != nil {
		return err
	}
	defer in.close()
	// The head of the capture shows its format (on a pipe, the first
	// line is enough), before the output is created.
	src, err := capture.NewSource(in, capture.Options{SkipInvalid: *skip})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("decode %s: interrupted after 0 frames: %w", shown, ctx.Err())
		}
		return fmt.Errorf("decode %s: %w", shown, err)
	}
	of, err := outfile.Create(*out, e.stdout, inputs...)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	defer of.Abort()

	if *policy != "" {
		pp := *policy
		if pp == "default" {
			pp = ""
		}
		opts := policyOptions{Template: *template, Window: *window, Tail: *tail, Name: shown}
		derr := decodeWithPolicy(ctx, env{e.stdin, of, e.stderr}, db, pp, src, opts)
		var cut *cutError
		if derr != nil && (!errors.As(derr, &cut) || cut.empty) {
			return derr // nothing to keep (or a broken output): the file that was there stays
		}
		// The envelopes before a bad line or an interrupt are whole and
		// are kept, as in the plain decode; the error still ends the
		// command with a non-zero status.
		if err := of.Commit(); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		return derr
	}

	var sink valueSink
	if parquetOut {
		h, err := dbcs.hash()
		if err != nil {
			return err
		}
		sink = lake.NewLong(of, map[string]string{lake.MetaDBC: h})
	} else {
		vw = valuelog.NewWriter(of, f)
		sink = vw
	}
	bar := newDecodeProgress(e, shown, in.size)
	derr := decodeCapture(ctx, shown, src, sel, sink.Write, func(frames int64) { bar.update(frames, in) })
	bar.done()
	var werr *writeError
	if errors.As(derr, &werr) {
		return derr // the output is broken: keep the file that was there
	}
	if derr != nil && sink.Lines() == 0 {
		return derr // nothing decoded: an empty file would only replace the one there
	}
	// What was decoded before a bad line or an interrupt is whole lines
	// (or a whole Parquet file of them) and is kept (committed), so no
	// good output is lost; the error still ends the command with a
	// non-zero status.
	if err := sink.Close(); err != nil {
		return fmt.Errorf("decode: write %s: %w", of.Name(), err)
	}
	if err := of.Commit(); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	sel.summary(e.stderr, shown, sink.Truncated())
	return derr
}

// valueSink is where the plain decode writes values: JSON lines or CSV
// (valuelog), or a long Parquet file (lake.Long).
type valueSink interface {
	Write(f *frame.Frame, iface string, vals []decoder.Value) error
	Lines() int
	Truncated() int
	// Close writes what is buffered (and a Parquet footer).
	Close() error
}

// writeError is a failure to write the output, as opposed to one of
// reading the capture.
type writeError struct{ err error }

func (w *writeError) Error() string { return w.err.Error() }
func (w *writeError) Unwrap() error { return w.err }

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
			return &writeError{fmt.Errorf("decode: write: %w", err)}
		}
	}
}

// files lists every DBC file named, for the check that -o is none of
// them.
func (d *dbcFlag) files() []string {
	out := append([]string(nil), d.all...)
	for _, fs := range d.iface {
		out = append(out, fs...)
	}
	return out
}

// input is the capture being decoded: a regular file read directly, or
// a pipe, FIFO or terminal read through a liveReader.
type input struct {
	r     io.Reader
	n     int64 // bytes read, for the progress line
	size  int64 // 0 when unknown
	close func()
}

func (in *input) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	in.n += int64(n)
	return n, err
}

// openInput opens a capture file, or stdin for "-". A source that is not
// a regular file (a pipe, a FIFO, a terminal) may block for as long as
// its writer likes, so it is read through a liveReader: idle (if not
// nil) is called before each wait for more input, and the end of ctx
// ends a blocked read.
func openInput(ctx context.Context, e env, name string, idle func()) (*input, error) {
	var (
		r     io.Reader
		close = func() {}
	)
	if name == "-" {
		r = e.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		r, close = f, func() { f.Close() }
	}
	if f, ok := r.(*os.File); ok {
		fi, err := f.Stat()
		switch {
		case err == nil && fi.IsDir():
			close()
			return nil, fmt.Errorf("decode: %s is a directory, not a capture", name)
		case err == nil && fi.Mode().IsRegular():
			return &input{r: f, size: fi.Size(), close: close}, nil
		}
	}
	lr := newLiveReader(ctx, r, idle)
	return &input{r: lr, close: func() { lr.stop(); close() }}, nil
}

// liveReader reads r in a goroutine of its own, so that a read blocked
// on a pipe can be left when ctx ends (a read of stdin cannot be
// interrupted otherwise), and so that the reader knows when it would
// block: then it calls idle, which flushes the output decoded so far to
// whoever is reading it live.
type liveReader struct {
	ctx   context.Context
	idle  func()
	data  chan []byte // filled buffers; closed after the last one
	free  chan []byte // emptied buffers, back to the reading goroutine
	done  chan struct{}
	cur   []byte // what is left of the buffer being read
	whole []byte // cur's buffer, returned to free once read
	err   error  // the source's error, after the last buffer
	errc  chan error
}

func newLiveReader(ctx context.Context, r io.Reader, idle func()) *liveReader {
	lr := &liveReader{ctx: ctx, idle: idle, data: make(chan []byte), free: make(chan []byte, 2),
		done: make(chan struct{}), errc: make(chan error, 1)}
	lr.free <- make([]byte, 32<<10)
	lr.free <- make([]byte, 32<<10)
	go func() {
		defer close(lr.data)
		for {
			var buf []byte
			select {
			case buf = <-lr.free:
			case <-lr.done:
				return
			}
			n, err := r.Read(buf[:cap(buf)])
			if n > 0 {
				select {
				case lr.data <- buf[:n]:
				case <-lr.done:
					return
				}
			} else {
				lr.free <- buf
			}
			if err != nil {
				lr.errc <- err
				return
			}
		}
	}()
	return lr
}

func (lr *liveReader) Read(p []byte) (int, error) {
	if len(lr.cur) == 0 {
		if lr.whole != nil {
			lr.free <- lr.whole
			lr.whole = nil
		}
		if lr.err != nil {
			return 0, lr.err
		}
		var (
			buf []byte
			ok  bool
		)
		select {
		case buf, ok = <-lr.data:
		default:
			// Nothing to read now: the writer is slow, and whoever
			// reads the output should see what was decoded so far.
			if lr.idle != nil {
				lr.idle()
			}
			select {
			case buf, ok = <-lr.data:
			case <-lr.ctx.Done():
				return 0, lr.ctx.Err()
			}
		}
		if !ok {
			lr.err = <-lr.errc
			return 0, lr.err
		}
		lr.cur, lr.whole = buf, buf
	}
	n := copy(p, lr.cur)
	lr.cur = lr.cur[n:]
	return n, nil
}

// stop lets the reading goroutine end; one blocked in a read of the
// source ends when that read returns.
func (lr *liveReader) stop() {
	select {
	case <-lr.done:
	default:
		close(lr.done)
	}
}

// decodeProgress shows a progress line on a terminal stderr once a decode
// has run for more than a second.
type decodeProgress struct {
	bar   *progress.Bar
	name  string
	size  int64
	start time.Time
	shown bool
}

func newDecodeProgress(e env, name string, size int64) *decodeProgress {
	f, ok := e.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &decodeProgress{}
	}
	return &decodeProgress{bar: progress.New(e.stderr, true), name: name, size: size, start: time.Now()}
}

func (p *decodeProgress) update(frames int64, in *input) {
	if p.bar == nil {
		return
	}
	now := time.Now()
	el := now.Sub(p.start)
	if el < time.Second {
		return
	}
	p.shown = true
	detail := fmt.Sprintf("%d frames", frames)
	st := progress.State{Label: "decode " + p.name, Detail: detail}
	if p.size > 0 && in.n > 0 {
		// Scale the bar by bytes read: elapsed so far over the projected total.
		st.Done = el
		st.Total = time.Duration(float64(el) * float64(p.size) / float64(in.n))
	}
	p.bar.Update(now, st)
}

func (p *decodeProgress) done() {
	if p.bar != nil && p.shown {
		p.bar.Clear()
	}
}
