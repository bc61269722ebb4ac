package decodejob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/cmdkit/outfile"
	"github.com/yukart/candec/internal/cmdkit/outformat"
	"github.com/yukart/candec/internal/cmdkit/progress"
)

// inputFile is one capture of many: named on the command line, or found
// in a directory named there.
type inputFile struct {
	path  string
	size  int64
	named bool
}

// expandInputs lists the captures of names: each file named, and every
// regular file under each directory named, in lexical order, leaving
// out names that begin with "." and the directory skip (the lake being
// written).
func expandInputs(names []string, skip string) ([]inputFile, error) {
	var skipInfo os.FileInfo
	if skip != "" {
		skipInfo, _ = os.Stat(skip)
	}
	var files []inputFile
	for _, name := range names {
		fi, err := os.Stat(name)
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		if !fi.IsDir() {
			files = append(files, inputFile{path: name, size: fi.Size(), named: true})
			continue
		}
		n := len(files)
		err = filepath.WalkDir(name, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != name && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if skipInfo != nil {
					if fi, err := d.Info(); err == nil && os.SameFile(fi, skipInfo) {
						return filepath.SkipDir
					}
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, inputFile{path: p, size: fi.Size()})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		if len(files) == n {
			return nil, fmt.Errorf("decode: %s is a directory with no file in it", name)
		}
	}
	return files, nil
}

// fileResult is what decoding one capture of many gave.
type fileResult struct {
	counts decodeCounts
	hash   string // of the bytes read, hex
	err    error
	noFmt  bool // the file is in no capture format
}

// countingReader counts and hashes what is read through it.
type countingReader struct {
	r    io.Reader
	h    hash.Hash
	n    *atomic.Int64 // bytes read, over every capture
	read int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		if c.h != nil {
			c.h.Write(p[:n])
		}
		c.count(n)
	}
	return n, err
}

// count counts n bytes read.
func (c *countingReader) count(n int) {
	c.n.Add(int64(n))
	c.read += int64(n)
}

// manyRun is the state of a decode of many captures.
type manyRun struct {
	cfg    *Config
	sel    *busDecoders // a template: each capture gets its own (fresh)
	files  []inputFile
	bytes  atomic.Int64
	frames atomic.Int64
	done   atomic.Int64
	total  int64 // bytes of every file

	removed int // temporary files of an earlier run, removed from the lake
}

// decodeFile decodes one capture to write. It hashes the bytes read
// when wantHash.
func (m *manyRun) decodeFile(ctx context.Context, in inputFile, wantHash bool, write func(*frame.Frame, string, []decoder.Value) error, truncated func() int) fileResult {
	f, err := os.Open(in.path)
	if err != nil {
		return fileResult{err: fmt.Errorf("decode: %w", err)}
	}
	defer f.Close()
	cr := &countingReader{r: f, n: &m.bytes}
	if wantHash {
		cr.h = sha256.New()
	}
	defer func() { m.bytes.Add(in.size - cr.read) }() // a file read in part counts whole
	sf := &seekFile{Reader: cr, f: f, count: cr.count}
	src, err := capture.NewSource(sf, capture.Options{SkipInvalid: m.cfg.SkipInvalid})
	if err != nil {
		return fileResult{err: fmt.Errorf("decode %s: %w", in.path, err), noFmt: errors.Is(err, capture.ErrFormat)}
	}
	sel := m.sel.fresh()
	var last int64
	err = decodeCapture(ctx, in.path, src, sel, write, func(n int64) { m.frames.Add(n - last); last = n })
	m.frames.Add(sel.frames - last)
	sel.skipped = src.Skipped()
	r := fileResult{err: err, counts: sel.counts(truncated())}
	if wantHash && sf.random && err == nil {
		// Read at random (MF4): what went through the hash is not the
		// content in order, so the content is hashed on its own.
		cr.h.Reset()
		if _, err := io.Copy(cr.h, io.NewSectionReader(f, 0, math.MaxInt64)); err != nil {
			r.err = fmt.Errorf("decode %s: %w", in.path, err)
		}
	}
	if wantHash {
		r.hash = hex.EncodeToString(cr.h.Sum(nil))[:16]
	}
	return r
}

// decodeMany decodes several captures, or every capture in directories:
// into a lake with cfg.Jobs captures at once, or one after the other
// into one output stream (JSON lines, CSV or a long Parquet file).
func decodeMany(ctx context.Context, cfg *Config, sel *busDecoders) error {
	start := time.Now()
	files, err := expandInputs(cfg.Inputs, cfg.OutDir)
	if err != nil {
		return err
	}
	m := &manyRun{cfg: cfg, sel: sel, files: files}
	for _, f := range files {
		m.total += f.size
	}
	stop := m.showProgress(start)
	var (
		results []fileResult
		written string
	)
	if cfg.OutDir != "" {
		results, written, err = m.toLake(ctx)
	} else {
		results, written, err = m.toStream(ctx)
	}
	stop()
	// The summary: what was left out, then one line of totals.
	var total decodeCounts
	skipped, noFmt := 0, 0
	for i, r := range results {
		if r.err != nil {
			if r.noFmt && !files[i].named {
				noFmt++
			} else {
				skipped++
			}
			continue
		}
		total.add(r.counts, i == 0)
	}
	if err != nil {
		return err
	}
	serr := writeSummary(cfg.Stderr, fmt.Sprintf("%d captures", len(files)-skipped-noFmt), sel.spec, total)
	el := time.Since(start)
	line := fmt.Sprintf("candec decode: %d captures, %d frames, %s in %.2fs (%.0f frames/s)", len(files)-skipped-noFmt, total.frames, written, el.Seconds(), float64(total.frames)/el.Seconds())
	if noFmt > 0 {
		line += fmt.Sprintf("; %d files of no capture format left out", noFmt)
	}
	if skipped > 0 {
		line += fmt.Sprintf("; %d captures skipped (--skip-invalid)", skipped)
	}
	if m.removed > 0 {
		line += fmt.Sprintf("; %d temporary files of an unfinished run removed", m.removed)
	}
	fmt.Fprintln(cfg.Stderr, line)
	return serr
}

// failed says what to do with the result of capture i: nil to go on
// (after a warning for a file left out), or the error that stops the
// run.
func (m *manyRun) failed(i int, r fileResult) error {
	if r.err == nil {
		return nil
	}
	in := m.files[i]
	var werr *WriteError
	switch {
	case errors.As(r.err, &werr), errors.Is(r.err, context.Canceled), errors.Is(r.err, context.DeadlineExceeded):
		return r.err
	case r.noFmt && !in.named:
		fmt.Fprintf(m.cfg.Stderr, "candec decode: %s left out: no capture format\n", in.path)
		return nil
	case m.cfg.SkipInvalid:
		fmt.Fprintf(m.cfg.Stderr, "candec decode: %s skipped: %v\n", in.path, r.err)
		return nil
	}
	return r.err
}

// toLake decodes every capture into the lake, cfg.Jobs at once. Each
// capture's files depend on that capture alone, so the lake is the same
// byte for byte whatever the number of jobs.
func (m *manyRun) toLake(ctx context.Context) ([]fileResult, string, error) {
	h, err := m.cfg.DBCs.Hash(context.WithoutCancel(ctx))
	if err != nil {
		return nil, "", err
	}
	lf, _ := outformat.LakeFormat() // Run checked there is one
	lk, err := lf.OpenLake(outformat.LakeConfig{Dir: m.cfg.OutDir, Context: ctx, DBC: h, Signals: m.cfg.Signals, Log: m.cfg.Stderr})
	if err != nil {
		return nil, "", fmt.Errorf("decode: %w", err)
	}
	defer lk.Close()
	m.removed = lk.Removed()
	results := make([]fileResult, len(m.files))
	var (
		next  atomic.Int64
		mu    sync.Mutex
		files int
		rows  int64
	)
	g, gctx := errgroup.WithContext(ctx)
	for range min(m.cfg.Jobs, len(m.files)) {
		g.Go(func() error {
			// One writer for the worker's captures: each takes over the
			// memory of the one before.
			w := lk.NewWriter()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(m.files) {
					return nil
				}
				if err := gctx.Err(); err != nil {
					return err // captures left undecoded: the run did not end
				}
				files0, rows0, trunc0 := w.Files(), w.Rows(), w.Truncated()
				r := m.decodeFile(gctx, m.files[i], true, w.Write, func() int { return w.Truncated() - trunc0 })
				if r.err == nil {
					if err := w.Commit(r.hash); err != nil {
						r.err = &WriteError{fmt.Errorf("decode: write lake: %w", err)}
					}
				}
				if r.err != nil {
					w.Abort()
				}
				results[i] = r
				m.done.Add(1)
				if err := m.failed(i, r); err != nil {
					return err
				}
				mu.Lock()
				files += w.Files() - files0
				rows += w.Rows() - rows0
				mu.Unlock()
			}
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return results, "", fmt.Errorf("decode: interrupted: %w (the lake holds the captures decoded before)", ctx.Err())
		}
		return results, "", err
	}
	return results, fmt.Sprintf("%d rows in %d files", rows, files), nil
}

// toStream decodes the captures one after the other, in order, into one
// output: the output is the same as that of their concatenation.
func (m *manyRun) toStream(ctx context.Context) ([]fileResult, string, error) {
	of, err := outfile.Create(m.cfg.Out, m.cfg.Stdout, m.cfg.inputs()...)
	if err != nil {
		return nil, "", fmt.Errorf("decode: -o: %w", err)
	}
	defer of.Abort()
	sink, err := m.cfg.Format.New(of, func() (string, error) { return m.cfg.DBCs.Hash(context.WithoutCancel(ctx)) })
	if err != nil {
		return nil, "", err
	}
	results := make([]fileResult, len(m.files))
	var stopErr error
	for i, in := range m.files {
		before := sink.Truncated()
		r := m.decodeFile(ctx, in, false, sink.Write, func() int { return sink.Truncated() - before })
		results[i] = r
		m.done.Add(1)
		if stopErr = m.failed(i, r); stopErr != nil {
			break
		}
	}
	var werr *WriteError
	if errors.As(stopErr, &werr) || stopErr != nil && sink.Lines() == 0 {
		return results, "", stopErr
	}
	// As with one capture: what was decoded before an error is kept.
	if err := sink.Close(); err != nil {
		return results, "", fmt.Errorf("decode: write %s: %w", of.Name(), err)
	}
	if err := of.Commit(); err != nil {
		return results, "", fmt.Errorf("decode: %w", err)
	}
	return results, fmt.Sprintf("%d values", sink.Lines()), stopErr
}

// showProgress draws a progress line on a terminal stderr: captures
// done, frames/s and the time left, by bytes read. It returns the
// function that stops it.
func (m *manyRun) showProgress(start time.Time) func() {
	if !m.cfg.Terminal {
		return func() {}
	}
	bar := progress.New(m.cfg.Stderr, true)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				bar.Clear()
				return
			case now := <-t.C:
				el := now.Sub(start)
				st := progress.State{Label: fmt.Sprintf("decode %d/%d captures", m.done.Load(), len(m.files)),
					Detail: fmt.Sprintf("%.0f frames/s", float64(m.frames.Load())/el.Seconds())}
				if b := m.bytes.Load(); b > 0 && m.total > 0 {
					st.Done, st.Total = el, time.Duration(float64(el)*float64(m.total)/float64(b))
				}
				bar.Update(now, st)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
