package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
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
	fs := newFlags(e, "decode", "--dbc [IFACE=]FILE[,FILE] [flags] CAPTURE|-")
	var dbcs dbcFlag
	fs.Var(&dbcs, "dbc", "DBC `[IFACE=]FILE[,FILE]`: files for every interface, or with IFACE= for one interface (repeatable)")
	format := fs.String("format", "json", "output format: json (JSON lines) or csv; see docs/decode-output.md")
	signals := fs.String("signals", "", "only signals whose name or message.signal matches this glob (comma-separated globs)")
	policy := fs.String("policy", "", "run the publishing policy (YAML; \"default\" for the built-in one) and print the envelopes the service would publish")
	template := fs.String("topic-template", pipeline.DefaultTopicTemplate, "with --policy: topic template")
	window := fs.Bool("window", false, "with --policy: also print the window stream")
	tail := fs.Duration("tail", 0, "with --policy: let time run on this long after the last frame (stale marks, heartbeats); 0 or more")
	skip := fs.Bool("skip-invalid", false, "skip malformed capture lines (counted) instead of stopping")
	out := fs.String("o", "-", "output `FILE` (- for stdout); written whole under a temporary name, never the capture itself")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkArgs(fs, 1, "CAPTURE"); err != nil {
		return err
	}
	// Everything the command line says is checked before the output is
	// created: a mistake must not cost the user an existing file.
	if len(dbcs.all) == 0 && len(dbcs.iface) == 0 {
		return &exitError{2, errors.New("decode: --dbc is required")}
	}
	f, ok := valuelog.ParseFormat(*format)
	if !ok {
		return &exitError{2, fmt.Errorf("decode: unknown --format %q (want json or csv)", *format)}
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
	if *tail < 0 {
		return &exitError{2, fmt.Errorf("decode: --tail %s: want 0 or a positive duration", *tail)}
	}
	name := fs.Arg(0)
	shown := name
	if name == "-" {
		shown = "stdin"
	}
	inputs := append([]string{name, *policy}, dbcs.files()...)

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
	var src capture.Source
	if *policy == "" {
		// The head of the capture shows its format; on a pipe, the
		// first line is enough.
		if src, err = capture.NewSource(in, capture.Options{SkipInvalid: *skip}); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("decode %s: interrupted after 0 frames: %w", shown, ctx.Err())
			}
			return fmt.Errorf("decode %s: %w", shown, err)
		}
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
		opts := policyOptions{Template: *template, Window: *window, Bus: -1, Tail: *tail, SkipInvalid: *skip, Name: shown}
		derr := decodeWithPolicy(ctx, env{e.stdin, of, e.stderr}, db, pp, in, opts)
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

	vw = valuelog.NewWriter(of, f)
	derr := decodeCapture(ctx, e, shown, src, in, sel, vw)
	var werr *writeError
	if errors.As(derr, &werr) {
		return derr // the output is broken: keep the file that was there
	}
	if derr != nil && vw.Lines() == 0 {
		return derr // nothing decoded: an empty file would only replace the one there
	}
	// What was decoded before a bad line or an interrupt is whole lines
	// and is kept (committed), so no good output is lost; the error
	// still ends the command with a non-zero status.
	if err := vw.Flush(); err != nil {
		return fmt.Errorf("decode: write %s: %w", of.Name(), err)
	}
	if err := of.Commit(); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	sel.summary(e.stderr, shown, vw.Truncated())
	return derr
}

// writeError is a failure to write the output, as opposed to one of
// reading the capture.
type writeError struct{ err error }

func (w *writeError) Error() string { return w.err.Error() }
func (w *writeError) Unwrap() error { return w.err }

// decodeCapture decodes the frames of r, read from in, to vw until the
// end of the capture, a malformed line (unless skipped), a write error
// or the end of ctx.
func decodeCapture(ctx context.Context, e env, name string, r capture.Source, in *input, sel *busDecoders, vw *valuelog.Writer) error {
	defer func() { sel.skipped = r.Skipped() }()
	bar := newDecodeProgress(e, name, in.size)
	defer bar.done()
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
			bar.update(sel.frames, in)
		}
		vals, ok := sel.decode(r, &fr)
		if !ok {
			continue
		}
		if err := vw.Write(&fr, r.Interface(fr.Bus), vals); err != nil {
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

// busDecoders picks the decoder for a frame's interface and counts, per
// interface, what the summary reports.
type busDecoders struct {
	spec     dbcFlag
	globs    []string
	byFile   map[string]*busDecoder
	all      *busDecoder
	resolved [256]bool
	byBus    [256]*busDecoder
	names    [256]string // interface names by bus index

	frames  int64 // every frame read
	skipped int   // malformed lines skipped (--skip-invalid)
	// Per bus index: frames, frames with an ID not in the bus's DBC,
	// remote and error frames, frames shorter than their message.
	busFrames, unknown, remote, errFrames, short [256]int64
}

type busDecoder struct {
	files []string
	db    *dbc.Database
	dec   *decoder.Decoder
	keep  []bool // by signal index; nil keeps all
	buf   []decoder.Value
}

func newBusDecoders(spec dbcFlag, globs []string) (*busDecoders, error) {
	s := &busDecoders{spec: spec, globs: globs, byFile: map[string]*busDecoder{}}
	if len(spec.all) > 0 {
		d, err := s.load(spec.all)
		if err != nil {
			return nil, err
		}
		s.all = d
	}
	ifaces := make([]string, 0, len(spec.iface))
	for name := range spec.iface {
		ifaces = append(ifaces, name)
	}
	slices.Sort(ifaces) // the first error is the same on every run
	for _, name := range ifaces {
		if _, err := s.load(spec.iface[name]); err != nil {
			return nil, err
		}
	}
	// A glob that matches no signal of any DBC is a typo: refuse it
	// before decoding rather than print nothing for it.
	for _, g := range globs {
		found := false
		for _, d := range s.byFile {
			if slices.ContainsFunc(d.db.Signals, func(sig *dbc.Signal) bool { return matchAny([]string{g}, sig) }) {
				found = true
				break
			}
		}
		if !found {
			return nil, &exitError{2, fmt.Errorf("decode: --signals %q matches no signal in %s", g, strings.Join(spec.files(), ", "))}
		}
	}
	return s, nil
}

func (s *busDecoders) load(files []string) (*busDecoder, error) {
	key := strings.Join(files, ",")
	if d, ok := s.byFile[key]; ok {
		return d, nil
	}
	db, err := dbc.Load(files...)
	if err != nil {
		return nil, err
	}
	d := &busDecoder{files: files, db: db, dec: decoder.New(db)}
	d.buf = make([]decoder.Value, 0, d.dec.MaxSignals())
	if len(s.globs) > 0 {
		d.keep = make([]bool, len(db.Signals))
		for _, sig := range db.Signals {
			d.keep[sig.Index] = matchAny(s.globs, sig)
		}
	}
	s.byFile[key] = d
	return d, nil
}

func matchAny(globs []string, sig *dbc.Signal) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, sig.Name); ok {
			return true
		}
		if ok, _ := path.Match(g, sig.FullName()); ok {
			return true
		}
	}
	return false
}

// decode decodes f with its interface's DBC; ok is false when the
// interface has none, the frame is a remote or error frame, or the ID
// is unknown (each counted for the summary).
func (s *busDecoders) decode(r capture.Source, f *frame.Frame) ([]decoder.Value, bool) {
	if !s.resolved[f.Bus] {
		s.resolved[f.Bus] = true
		s.byBus[f.Bus] = s.all
		s.names[f.Bus] = r.Interface(f.Bus)
		if files, ok := s.spec.iface[s.names[f.Bus]]; ok {
			s.byBus[f.Bus] = s.byFile[strings.Join(files, ",")]
		}
	}
	s.busFrames[f.Bus]++
	switch {
	case f.Flags&frame.Remote != 0:
		s.remote[f.Bus]++
		return nil, false
	case f.Flags&frame.Error != 0:
		s.errFrames[f.Bus]++
		return nil, false
	}
	d := s.byBus[f.Bus]
	if d == nil {
		return nil, false
	}
	short := d.dec.Stats.Short
	msg, vals := d.dec.Decode(f, d.buf[:0])
	if msg == nil {
		s.unknown[f.Bus]++
		return nil, false
	}
	s.short[f.Bus] += int64(d.dec.Stats.Short - short)
	if d.keep != nil {
		n := 0
		for _, v := range vals {
			if d.keep[v.Signal.Index] {
				vals[n] = v
				n++
			}
		}
		vals = vals[:n]
	}
	return vals, true
}

// summary writes to w one line for each thing a user may not expect
// from the output alone: an empty capture, an --dbc IFACE= interface
// that sent nothing, interfaces without a DBC, unknown IDs, remote and
// error frames, values missing from short frames, skipped lines. A
// clean decode writes nothing.
func (s *busDecoders) summary(w io.Writer, name string, truncated int) {
	const p = "candec decode: "
	if s.skipped > 0 {
		fmt.Fprintf(w, p+"skipped %d malformed lines\n", s.skipped)
	}
	if s.frames == 0 {
		fmt.Fprintf(w, p+"%s holds no frames\n", name)
		return
	}
	seen := map[string]bool{}
	for bus := range 256 {
		n := s.busFrames[bus]
		if n == 0 {
			continue
		}
		iface := s.names[bus]
		seen[iface] = true
		if s.byBus[bus] == nil {
			fmt.Fprintf(w, p+"%s: %d frames not decoded: no --dbc for this interface\n", iface, n)
			continue
		}
		if u := s.unknown[bus]; u > 0 {
			fmt.Fprintf(w, p+"%s: %d of %d frames had IDs not in %s\n", iface, u, n, strings.Join(s.byBus[bus].files, ","))
		}
		if r, e := s.remote[bus], s.errFrames[bus]; r+e > 0 {
			fmt.Fprintf(w, p+"%s: %d remote and %d error frames skipped (they carry no signals)\n", iface, r, e)
		}
		if sh := s.short[bus]; sh > 0 {
			fmt.Fprintf(w, p+"%s: %d frames shorter than their message\n", iface, sh)
		}
	}
	if truncated > 0 {
		fmt.Fprintf(w, p+"%d values left out: their signals do not fit in short frames\n", truncated)
	}
	ifaces := make([]string, 0, len(s.spec.iface))
	for iface := range s.spec.iface {
		ifaces = append(ifaces, iface)
	}
	slices.Sort(ifaces)
	for _, iface := range ifaces {
		if !seen[iface] {
			fmt.Fprintf(w, p+"--dbc %s=%s: no frames on %s in %s\n", iface, strings.Join(s.spec.iface[iface], ","), iface, name)
		}
	}
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
